/**
 * Benchmarks in the deployed shape (docs/benchmarks.md, issue 31): `npm run bench`.
 *   npm run bench                         # all, list and DATEV on 100,000 seeded invoices
 *   npm run bench -- --1m                 # the same on 1,000,000 (seeding takes minutes)
 *   npm run bench -- api-read list        # some, by name
 * The service runs as the Procfile deploys it: `release` on a fresh bench database, then `web` and
 * `worker` as separate processes (NODE_ENV=production, LOG_LEVEL=info with the access log written
 * to a file, rate limits on but high, generated secrets and METRICS_TOKEN); every bare baseline is
 * a process of its own (lib/bareProcess.ts); load comes from other processes (autocannon in a
 * child, wrk). Ours and the baseline are measured in turn (ABBA). Per benchmark: the ratio,
 * latency percentiles, CPU per request of each process (/proc utime + stime) and each process's
 * peak RSS (VmHWM, reset at the benchmark's start). The table is printed as markdown and written to
 * bench-results/<timestamp>.md (with a .json beside it and the processes' logs in a folder).
 *
 * Environment as the in-process runner (test/bench/run.ts): DATABASE_URL (admin connection),
 * REDIS_URL, BENCH_CONNECTIONS (20), BENCH_DURATION (10 s), BENCH_INVOICES (100,000; --1m:
 * 1,000,000), BENCH_WEBHOOK_EVENTS (2,000), BENCH_RENDER_N (400); BENCH_N sets the last three
 * small at once for a smoke run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { prepareBenchEnv, type BenchEnv } from './lib/env';
import { fmtLoad, interleavedLoads, mergeLoads, runLoad, type CpuReader, type LoadRequest, type LoadResult, type LoadSpec } from './lib/load';
import { percentile } from './lib/measure';
import { ProcessMeter, minus, statOf, treeCpuSeconds } from './lib/procStats';
import { productionEnv, productionSecrets, runRelease, startBareProcess, startWeb, startWorker, type RunningProcess } from './lib/procfile';
import { tenItems } from './lib/fixtures';
import type { SeededTenant } from './lib/seed';
import type { Row } from './lib/pdfkitPage';

type Latency = { p50: number; p95: number; p99: number };

/** One line of the deployed-shape table. ratio = ours / baseline. */
export interface DeployedRow {
  name: string;
  metric: string;
  better: 'higher' | 'lower';
  ours: number;
  baseline: number | null;
  baselineLabel?: string;
  latency?: { ours?: Latency; baseline?: Latency };
  /** CPU µs per request (or per document, per event) of each process, ours and the baseline's. */
  cpu?: { ours: Record<string, number>; baseline?: Record<string, number> };
  /** Peak RSS in bytes of each process during the benchmark. */
  rss?: Record<string, number>;
  target?: string;
  notes?: string[];
}

interface Deployed {
  env: BenchEnv;
  prodEnv: NodeJS.ProcessEnv;
  web: RunningProcess;
  /** Replaced when a benchmark restarts it (webhooks: accepting with no worker running). */
  worker: RunningProcess;
  logDir: string;
  connections: number;
  duration: number;
  seeded: () => Promise<SeededTenant>;
  log: (line: string) => void;
}

interface DeployedBenchmark {
  name: string;
  run: (d: Deployed) => Promise<DeployedRow[]>;
}

const small = process.env.BENCH_N;
// Rendering at steady state: a renderer lives as long as its worker and renders a month-end batch
// of thousands; with 100 per kind the measured batch still paid much of V8's warm-up (15.0 against
// 11.2 ms of worker CPU per PDF at 400: docs/benchmarks.md, "Rendering measured at steady state").
const RENDER_N = Number(process.env.BENCH_RENDER_N ?? small ?? 400);
const WEBHOOK_EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? small ?? 2000);

/** CPU of the named processes (each with its direct children), cumulative µs. */
const cpuOf =
  (procs: () => RunningProcess[]): CpuReader =>
  () =>
    new ProcessMeter(() => Object.fromEntries(procs().map((p) => [p.name, p.pid]))).cpuUs();
const latencyOf = (r: LoadResult): Latency => ({ p50: r.latencyMs.p50, p95: r.latencyMs.p95, p99: r.latencyMs.p99 });

/** Peak RSS of every process that takes part, from a reset at the start of `fn`. */
async function withPeaks<T>(procs: () => RunningProcess[], fn: () => Promise<T>): Promise<[T, Record<string, number>]> {
  const meter = () => new ProcessMeter(() => Object.fromEntries(procs().map((p) => [p.name, p.pid])));
  meter().resetPeaks();
  const result = await fn();
  return [result, meter().peaks()];
}

/** An HTTP pair (ours on the web process, the baseline's process) in ABBA slices, as api-read in-process. */
async function httpPair(
  d: Deployed,
  bare: RunningProcess,
  ours: Omit<LoadSpec, 'url'>,
  base: Omit<LoadSpec, 'url'>,
): Promise<{ o: LoadResult; b: LoadResult; oCpu: Record<string, number>; bCpu: Record<string, number>; rss: Record<string, number> }> {
  const [[[o, , oCpu], [b, , bCpu]], rss] = await withPeaks(
    () => [d.web, d.worker, bare],
    () => interleavedLoads({ ...ours, url: d.web.url! }, { ...base, url: bare.url! }, { a: cpuOf(() => [d.web, d.worker]), b: cpuOf(() => [bare]) }),
  );
  d.log(`  ours:     ${fmtLoad(o)}`);
  d.log(`  baseline: ${fmtLoad(b)}`);
  return { o, b, oCpu, bCpu, rss };
}

const apiRead: DeployedBenchmark = {
  name: 'api-read',
  async run(d) {
    const { createTeam } = await import('../helpers/factories');
    const { createDraftInvoice } = await import('../helpers/invoiceFactory');
    const { tenant, admin, viewer } = await createTeam();
    const invoice = await createDraftInvoice(tenant, admin, { items: tenItems() });
    const bare = await startBareProcess({ mode: 'read', tenantId: tenant.id }, d.logDir);
    try {
      const load = { connections: d.connections, duration: d.duration, warmupSec: 2 };
      const { o, b, oCpu, bCpu, rss } = await httpPair(
        d,
        bare,
        { ...load, requests: [{ method: 'GET', path: `/api/invoices/${invoice.id}`, headers: { authorization: `Bearer ${viewer.token}` } }] },
        { ...load, requests: [{ method: 'GET', path: `/invoices/${invoice.id}` }] },
      );
      return [
        {
          name: 'api-read, invoice with 10 items',
          metric: 'requests/s',
          better: 'higher',
          ours: o.okPerSec,
          baseline: b.okPerSec,
          baselineLabel: 'bare Koa + pg, one select',
          latency: { ours: latencyOf(o), baseline: latencyOf(b) },
          cpu: { ours: oCpu, baseline: bCpu },
          rss,
          target: '≥ 0.8',
          notes: o.non2xx ? [`ours non-2xx: ${JSON.stringify(o.statusCodes)}`] : [],
        },
      ];
    } finally {
      await bare.stop();
    }
  },
};

const apiWrite: DeployedBenchmark = {
  name: 'api-write',
  async run(d) {
    const { createTeam } = await import('../helpers/factories');
    const { createCustomer } = await import('../helpers/invoiceFactory');
    const { tenant, member } = await createTeam();
    const customer = await createCustomer(tenant, { address: 'Landstraße 12\n4020 Linz', vatId: 'ATU87654321' });
    const body = JSON.stringify({ type: 'rechnung', customerId: customer.id, items: tenItems() });
    const json = { 'content-type': 'application/json' };
    const bare = await startBareProcess({ mode: 'write', tenantId: tenant.id }, d.logDir);
    try {
      const load = { connections: d.connections, duration: d.duration, warmupSec: 2 };
      const { o, b, oCpu, bCpu, rss } = await httpPair(
        d,
        bare,
        { ...load, requests: [{ method: 'POST', path: '/api/invoices', headers: { ...json, authorization: `Bearer ${member.token}` }, body }] },
        { ...load, requests: [{ method: 'POST', path: '/invoices', headers: json, body }] },
      );
      return [
        {
          name: 'api-write, 10 items',
          metric: 'requests/s',
          better: 'higher',
          ours: o.okPerSec,
          baseline: b.okPerSec,
          baselineLabel: 'bare Koa + pg, 2 inserts in a transaction',
          latency: { ours: latencyOf(o), baseline: latencyOf(b) },
          cpu: { ours: oCpu, baseline: bCpu },
          rss,
          target: '≥ 0.9, p99 ≤ 1.5 × baseline',
          notes: o.non2xx ? [`ours non-2xx: ${JSON.stringify(o.statusCodes)}`] : [],
        },
      ];
    } finally {
      await bare.stop();
    }
  },
};

const list: DeployedBenchmark = {
  name: 'list',
  async run(d) {
    const seeded = await d.seeded();
    const { createUser } = await import('../helpers/factories');
    const { listQueries, toQuery } = await import('./list');
    const viewer = await createUser({ id: seeded.tenantId }, 'viewer');
    const qs = listQueries();
    const bare = await startBareProcess({ mode: 'list', tenantId: seeded.tenantId }, d.logDir);
    try {
      const ours: LoadRequest[] = qs.map((q) => ({ method: 'GET', path: `/api/invoices?${toQuery(q)}`, headers: { authorization: `Bearer ${viewer.token}` } }));
      const theirs: LoadRequest[] = qs.map((q) => ({ method: 'GET' as const, path: `/invoices?${toQuery(q)}` }));
      const rows: DeployedRow[] = [];
      // Saturated (the run's connections, closed loop: latency is mostly the queue behind the
      // CPU of 2 cores), then one connection: what a bookkeeper's request costs on its own.
      for (const connections of [d.connections, 1]) {
        const load = { connections, duration: d.duration, warmupSec: 2 };
        const { o, b, oCpu, bCpu, rss } = await httpPair(d, bare, { ...load, requests: ours }, { ...load, requests: theirs });
        rows.push({
          name: `list p95, ${seeded.total.toLocaleString('en')} invoices, ${qs.length} filter variants, ${connections} connection${connections === 1 ? '' : 's'}`,
          metric: 'ms',
          better: 'lower',
          ours: o.latencyMs.p95,
          baseline: b.latencyMs.p95,
          baselineLabel: 'same count + page SQL',
          latency: { ours: latencyOf(o), baseline: latencyOf(b) },
          cpu: { ours: oCpu, baseline: bCpu },
          rss,
          target: '≤ 20 ms, ≤ 0.05 (1M)',
          notes: [`${o.okPerSec.toFixed(0)} vs ${b.okPerSec.toFixed(0)} requests/s`, ...(o.non2xx ? [`ours non-2xx: ${JSON.stringify(o.statusCodes)}`] : [])],
        });
      }
      return rows;
    } finally {
      await bare.stop();
    }
  },
};

const webhooks: DeployedBenchmark = {
  name: 'webhook-ingest',
  async run(d) {
    const n = WEBHOOK_EVENTS;
    const half = Math.max(1, Math.round(n / 2));
    const { createTeam } = await import('../helpers/factories');
    const { db } = await import('../../shared/db');
    const { SECRET, bookingCheck, deliveries, drained, stripeDeliveriesFor, toLedgerMs } = await import('./webhookIngest');
    const { BARE_WEBHOOK_TABLE } = await import('./lib/bareRoutes');
    const k = db();
    await k.raw(BARE_WEBHOOK_TABLE);
    const [warm, steady, a1, a2, alone] = [await createTeam(), await createTeam(), await createTeam(), await createTeam(), await createTeam()];
    const forTeam = (t: { admin: { token: string } }, count: number) => stripeDeliveriesFor(d.web.url!, t.admin.token, count);
    const wrk = (url: string, requests: LoadRequest[]) => runLoad({ url, connections: d.connections, amount: requests.length, requests, tool: 'wrk' });
    const bare = await startBareProcess({ mode: 'webhook', secret: SECRET }, d.logDir);
    const rows: DeployedRow[] = [];
    let workerStopped = false;
    try {
      const [beside, rssBeside] = await withPeaks(
        () => [d.web, d.worker, bare],
        async () => {
          // Warm-up of both sides, as in-process (webhookIngest.ts).
          await wrk(d.web.url!, (await forTeam(warm, 200)).requests);
          await drained(k, warm.tenant.id);
          await wrk(bare.url!, deliveries(200, '/hook').requests);
          // Receipt → ledger at a steady 50/s, well below capacity.
          const paced = (await forTeam(steady, 250)).requests;
          await runLoad({ url: d.web.url!, connections: 5, amount: paced.length, requests: paced, rate: 50 });
          await drained(k, steady.tenant.id);
          const steadyLedger = await toLedgerMs(k, steady.tenant.id);
          d.log(`  steady 50/s: receipt → journal entry p50 ${percentile(steadyLedger, 50).toFixed(0)} / p99 ${percentile(steadyLedger, 99).toFixed(0)} ms`);
          // Accepted beside the working worker vs the bare receiver, ABBA in two halves per side.
          const oursReqs = [(await forTeam(a1, half)).requests, (await forTeam(a2, half)).requests];
          const bareReqs = [deliveries(half, '/hook').requests, deliveries(half, '/hook').requests];
          const taken = { a: [] as LoadResult[], b: [] as LoadResult[] };
          const cpu = { a: {} as Record<string, number>, b: {} as Record<string, number> };
          const t0 = performance.now();
          for (const [side, i] of [
            ['a', 0],
            ['b', 0],
            ['b', 1],
            ['a', 1],
          ] as const) {
            const read = side === 'a' ? cpuOf(() => [d.web, d.worker]) : cpuOf(() => [bare]);
            const before = read();
            taken[side].push(await wrk(side === 'a' ? d.web.url! : bare.url!, side === 'a' ? oursReqs[i] : bareReqs[i]));
            for (const [name, us] of Object.entries(minus(read(), before))) cpu[side][name] = (cpu[side][name] ?? 0) + us;
          }
          await drained(k, a1.tenant.id);
          await drained(k, a2.tenant.id);
          const bookedSec = (performance.now() - t0) / 1000;
          return { o: mergeLoads(taken.a), b: mergeLoads(taken.b), cpu, steadyLedger, bookedSec };
        },
      );
      const perReq = (us: Record<string, number>, r: LoadResult) => Object.fromEntries(Object.entries(us).map(([p, v]) => [p, v / Math.max(1, r.sent)]));
      d.log(`  ours accepted beside the worker: ${fmtLoad(beside.o)}`);
      d.log(`  bare receiver:                   ${fmtLoad(beside.b)}`);
      rows.push({
        name: 'webhooks accepted beside a working worker',
        metric: 'events/s',
        better: 'higher',
        ours: beside.o.okPerSec,
        baseline: beside.b.okPerSec,
        baselineLabel: 'bare receiver storing the raw event',
        latency: { ours: latencyOf(beside.o), baseline: latencyOf(beside.b) },
        cpu: { ours: perReq(beside.cpu.a, beside.o), baseline: perReq(beside.cpu.b, beside.b) },
        rss: rssBeside,
        target: '≥ 0.8',
        notes: [`${n} deliveries (every fifth a re-delivery), all booked ${beside.bookedSec.toFixed(1)} s after the first`],
      });
      rows.push({
        name: 'webhooks receipt → ledger p99 at 50/s',
        metric: 'ms',
        better: 'lower',
        ours: percentile(beside.steadyLedger, 99),
        baseline: null,
        latency: { ours: { p50: percentile(beside.steadyLedger, 50), p95: percentile(beside.steadyLedger, 95), p99: percentile(beside.steadyLedger, 99) } },
        target: '≤ 100 ms',
      });

      // Booking by one worker process: accepted with no worker running (the "accepted alone"
      // baseline), then a fresh worker process books the backlog; booked/s from its first to its
      // last processed_at, its CPU from ready to drained.
      await d.worker.stop();
      workerStopped = true;
      const aloneReqs = (await forTeam(alone, n)).requests;
      const webCpu = cpuOf(() => [d.web]);
      const [booked, rssBooked] = await withPeaks(
        () => [d.web],
        async () => {
          const c0 = webCpu();
          const accepted = await wrk(d.web.url!, aloneReqs);
          const acceptCpu = minus(webCpu(), c0);
          d.log(`  ours accepted, no worker running: ${fmtLoad(accepted)}`);
          d.worker = await startWorker(d.prodEnv, d.logDir);
          workerStopped = false;
          const w0 = treeCpuSeconds(d.worker.pid);
          await drained(k, alone.tenant.id);
          const workerUs = (treeCpuSeconds(d.worker.pid) - w0) * 1e6;
          const { rows: win } = await k.raw(
            `select extract(epoch from max(processed_at) - min(processed_at)) as "sec", count(*) filter (where status = 'processed') as "processed", count(*) as "rows"
               from webhook_events where tenant_id = ?`,
            [alone.tenant.id],
          );
          return { accepted, acceptCpu, workerUs, sec: Number(win[0].sec), rows: Number(win[0].rows), processed: Number(win[0].processed) };
        },
      );
      const rss = { ...rssBooked, ...new ProcessMeter(() => ({ worker: d.worker.pid })).peaks() };
      const bookedPerSec = booked.rows / Math.max(0.001, booked.sec);
      d.log(`  one worker process booked ${booked.rows} events (${booked.processed} processed) in ${booked.sec.toFixed(1)} s: ${bookedPerSec.toFixed(0)}/s`);
      rows.push({
        name: 'webhooks fully booked by one worker process',
        metric: 'events/s',
        better: 'higher',
        ours: bookedPerSec,
        baseline: booked.accepted.okPerSec,
        baselineLabel: 'ours accepted alone (no worker)',
        latency: { baseline: latencyOf(booked.accepted) },
        cpu: { ours: { worker: booked.workerUs / Math.max(1, booked.rows) }, baseline: perReq(booked.acceptCpu, booked.accepted) },
        rss,
        target: '≥ 0.5',
        notes: [`backlog of ${booked.rows} events booked by a fresh worker process; worker CPU includes its outbox relay and recovery loop`],
      });
      let duplicates = 0;
      const detail: string[] = [];
      for (const t of [steady, a1, a2, alone]) {
        const { c, duplicates: dup } = await bookingCheck(k, t.tenant.id);
        duplicates += dup;
        detail.push(`${c.invoices} invoices / ${c.movements} movements`);
      }
      rows.push({ name: 'webhooks duplicate invoices', metric: 'count', better: 'lower', ours: duplicates, baseline: null, target: '= 0', notes: detail });
      return rows;
    } finally {
      await bare.stop();
      // The benchmarks after this one need a worker, also when this one failed without one.
      if (workerStopped) d.worker = await startWorker(d.prodEnv, d.logDir);
    }
  },
};

const rendering: DeployedBenchmark = {
  name: 'rendering',
  async run(d) {
    const n = RENDER_N;
    const { renderThroughWorker, RENDER_WARMUP } = await import('./rendering');
    const { makeDocumentInput, manyItems } = await import('../formats/pdf/fixtures');
    const { Queue } = await import('bullmq');
    const { createRedis } = await import('../../shared/redis');
    const [ours, rssOurs] = await withPeaks(
      () => [d.web, d.worker],
      () =>
        renderThroughWorker({
          n,
          kinds: ['pdf', 'zugferd'],
          prefix: d.env.redisPrefix,
          treeCpuSeconds: () => treeCpuSeconds(d.worker.pid),
          mainCpuSeconds: () => {
            const s = statOf(d.worker.pid);
            return s.user + s.system;
          },
          log: d.log,
        }),
    );
    // The baseline: pdfkit pages in a worker-like process (a BullMQ worker, one job at a time).
    const prefix = `${d.env.redisPrefix}:pdfkit`;
    const rows = makeDocumentInput({ items: manyItems(10) }).invoice.items;
    const bare = await startBareProcess({ mode: 'pdfkit', prefix, rows: rows as Row[] }, d.logDir);
    const connection = createRedis('producer');
    const queue = new Queue('bench-pdfkit', { connection, prefix });
    /** Queues `count` page jobs at once; each one's queued → finished ms once all are done. */
    const batch = async (count: number) => {
      const queuedAt = Date.now();
      const jobs = await queue.addBulk(Array.from({ length: count }, (_, i) => ({ name: 'page', data: { i } })));
      const waits: number[] = [];
      for (const j of jobs) {
        for (;;) {
          const job = await queue.getJob(j.id!);
          if (job?.finishedOn) {
            waits.push(job.finishedOn - queuedAt);
            break;
          }
          if (job?.failedReason) throw new Error(`a pdfkit job failed: ${job.failedReason}`);
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      return waits;
    };
    let base: { perSec: number; cpuMs: number; lat: Latency };
    let rssBase: Record<string, number>;
    try {
      await batch(RENDER_WARMUP); // warm-up, as each of the worker's renderers had
      [base, rssBase] = await withPeaks(
        () => [bare],
        async () => {
          const c0 = treeCpuSeconds(bare.pid);
          const t0 = performance.now();
          const waits = await batch(n);
          const ms = performance.now() - t0;
          return {
            perSec: (n * 1000) / ms,
            cpuMs: ((treeCpuSeconds(bare.pid) - c0) * 1000) / n,
            lat: { p50: percentile(waits, 50), p95: percentile(waits, 95), p99: percentile(waits, 99) },
          };
        },
      );
    } finally {
      await queue.close();
      connection.disconnect();
      await bare.stop();
    }
    d.log(`  pdfkit page, worker-like process: ${base.perSec.toFixed(1)}/s, ${base.cpuMs.toFixed(1)} ms CPU per page`);
    return ours.map((r) => ({
      name: `${r.kind === 'pdf' ? 'PDF' : 'ZUGFeRD'} per worker core`,
      metric: 'documents per CPU-second',
      better: 'higher' as const,
      ours: 1000 / r.cpuMsPerDoc,
      baseline: 1000 / base.cpuMs,
      baselineLabel: 'pdfkit page in a worker-like process',
      latency: { ours: r.latencyMs, baseline: base.lat },
      cpu: { ours: { worker: r.cpuMsPerDoc * 1000 }, baseline: { [bare.name]: base.cpuMs * 1000 } },
      rss: { ...rssOurs, ...rssBase },
      target: r.kind === 'pdf' ? '≥ 5' : '≥ 4',
      notes: [`wall: ${r.perSec.toFixed(1)} vs ${base.perSec.toFixed(1)} documents/s; ${n} queued at once, latency = queued → stored`],
    }));
  },
};

const datev: DeployedBenchmark = {
  name: 'reports',
  async run(d) {
    const seeded = await d.seeded();
    const { createUser } = await import('../helpers/factories');
    const viewer = await createUser({ id: seeded.tenantId }, 'viewer');
    const bare = await startBareProcess({ mode: 'datev', tenantId: seeded.tenantId }, d.logDir);
    /** One download consumed as a client would; wall ms, bytes. */
    const download = async (url: string, headers: Record<string, string> = {}) => {
      const t0 = performance.now();
      // Uncompressed on both sides: the bare route does not compress, and ours would otherwise
      // gzip the file (fetch asks for it) and this process inflate 20 MB: not the export's cost.
      const res = await fetch(url, { headers: { 'accept-encoding': 'identity', ...headers } });
      if (!res.ok || !res.body) throw new Error(`${url}: ${res.status} ${await res.text()}`);
      let bytes = 0;
      for await (const chunk of res.body) bytes += (chunk as Uint8Array).length;
      return { ms: performance.now() - t0, bytes };
    };
    const quarters = [1, 2, 3, 4].map((q) => ({
      q,
      start: `2026-${String(q * 3 - 2).padStart(2, '0')}-01`,
      end: new Date(Date.UTC(2026, q * 3, 0)).toISOString().slice(0, 10),
    }));
    try {
      const oursOf = (q: number) => download(`${d.web.url}/api/reports/datev?year=2026&quarter=${q}`, { authorization: `Bearer ${viewer.token}` });
      const bareOf = (x: (typeof quarters)[number]) => download(`${bare.url}/datev?start=${x.start}&end=${x.end}`);
      await oursOf(1); // warm-up (plans, caches), as in-process
      await bareOf(quarters[0]);
      const [res, rss] = await withPeaks(
        () => [d.web, d.worker, bare],
        async () => {
          const sum = { a: { ms: 0, bytes: 0, each: [] as number[] }, b: { ms: 0, bytes: 0, each: [] as number[] } };
          const cpu = { a: {} as Record<string, number>, b: {} as Record<string, number> };
          // Alternating per quarter, ABBA.
          for (const [i, side] of (['a', 'b', 'b', 'a', 'a', 'b', 'b', 'a'] as const).entries()) {
            const x = quarters[Math.floor(i / 2)];
            const read = side === 'a' ? cpuOf(() => [d.web, d.worker]) : cpuOf(() => [bare]);
            const before = read();
            const r = side === 'a' ? await oursOf(x.q) : await bareOf(x);
            for (const [name, us] of Object.entries(minus(read(), before))) cpu[side][name] = (cpu[side][name] ?? 0) + us;
            sum[side].ms += r.ms;
            sum[side].bytes += r.bytes;
            sum[side].each.push(r.ms);
          }
          return { sum, cpu };
        },
      );
      const per4 = (us: Record<string, number>) => Object.fromEntries(Object.entries(us).map(([p, v]) => [p, v / 4]));
      const { sum, cpu } = res;
      d.log(`  ours DATEV, four quarters over HTTP: ${(sum.a.ms / 1000).toFixed(2)} s, ${(sum.a.bytes / 1024 / 1024).toFixed(0)} MB`);
      d.log(`  bare cursor CSV, four quarters:      ${(sum.b.ms / 1000).toFixed(2)} s, ${(sum.b.bytes / 1024 / 1024).toFixed(0)} MB`);
      const q = (xs: number[]): Latency => ({ p50: percentile(xs, 50), p95: percentile(xs, 95), p99: percentile(xs, 99) });
      return [
        {
          name: `DATEV whole year (4 quarterly downloads), ${seeded.total.toLocaleString('en')} invoices`,
          metric: 's',
          better: 'lower',
          ours: sum.a.ms / 1000,
          baseline: sum.b.ms / 1000,
          baselineLabel: 'plain cursor CSV over HTTP',
          latency: { ours: q(sum.a.each), baseline: q(sum.b.each) },
          cpu: { ours: per4(cpu.a), baseline: per4(cpu.b) },
          rss,
          target: '≤ 1.3',
          notes: [
            `${(sum.a.bytes / 1024 / 1024).toFixed(1)} MB vs ${(sum.b.bytes / 1024 / 1024).toFixed(1)} MB; latency = one quarter's download; CPU per quarterly download`,
          ],
        },
      ];
    } finally {
      await bare.stop();
    }
  },
};

const ALL: DeployedBenchmark[] = [apiRead, apiWrite, list, webhooks, rendering, datev];

const fmt = (n: number | null | undefined) =>
  n === null || n === undefined || Number.isNaN(n)
    ? '—'
    : Math.abs(n) >= 100 || Number.isInteger(n)
      ? Math.round(n).toLocaleString('en')
      : Math.abs(n) >= 10
        ? n.toFixed(1)
        : n.toFixed(2);
const lat = (l?: Latency) => (l ? `${fmt(l.p50)} / ${fmt(l.p95)} / ${fmt(l.p99)}` : '—');
const perProc = (x?: Record<string, number>, unit = (v: number) => fmt(v)) =>
  x && Object.keys(x).length
    ? Object.entries(x)
        .map(([p, v]) => `${p} ${unit(v)}`)
        .join(', ')
    : '—';

export function markdownTable(rows: DeployedRow[]): string {
  const head = [
    'benchmark',
    'metric',
    'ours',
    'baseline',
    'ratio',
    'target',
    'p50 / p95 / p99 ms, ours',
    'p50 / p95 / p99 ms, baseline',
    'CPU µs per request, ours',
    'CPU µs per request, baseline',
    'peak RSS MB',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i >= 2 && i <= 4 ? '---:' : '---')).join('|')}|`];
  for (const r of rows) {
    const ratio = r.baseline ? r.ours / r.baseline : null;
    lines.push(
      `| ${[
        r.name,
        `${r.metric} (${r.better} is better)`,
        fmt(r.ours),
        r.baseline === null ? '—' : `${fmt(r.baseline)}${r.baselineLabel ? ` (${r.baselineLabel})` : ''}`,
        ratio === null ? '—' : ratio.toFixed(2),
        r.target ?? '—',
        lat(r.latency?.ours),
        lat(r.latency?.baseline),
        perProc(r.cpu?.ours),
        perProc(r.cpu?.baseline),
        perProc(r.rss, (v) => (v / 1024 / 1024).toFixed(0)),
      ].join(' | ')} |`,
    );
  }
  const notes = rows.filter((r) => r.notes?.length).map((r) => `- ${r.name}: ${r.notes!.join('; ')}`);
  return `${lines.join('\n')}\n${notes.length ? `\n${notes.join('\n')}\n` : ''}`;
}

async function main() {
  const args = process.argv.slice(2);
  const wanted = args.filter((a) => !a.startsWith('-'));
  const unknown = wanted.filter((w) => !ALL.some((b) => b.name === w));
  if (unknown.length) {
    console.error(`Unknown benchmark(s): ${unknown.join(', ')}. Available: ${ALL.map((b) => b.name).join(', ')}`);
    process.exit(2);
  }
  const selected = wanted.length ? ALL.filter((b) => wanted.includes(b.name)) : ALL;
  const total = Number(process.env.BENCH_INVOICES ?? (args.includes('--1m') ? 1_000_000 : small ? Math.max(1000, Number(small) * 100) : 100_000));

  // Before any service module loads (they read the configuration once): the benchmark process
  // signs tokens with the same secret as the web process.
  Object.assign(process.env, productionSecrets());
  process.env.LOG_LEVEL ??= 'warn';
  const startedAt = new Date();
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const outDir = path.resolve(import.meta.dirname, '../../bench-results');
  const logDir = path.join(outDir, stamp);
  fs.mkdirSync(logDir, { recursive: true });

  const env = await prepareBenchEnv({ migrate: false });
  const running: RunningProcess[] = [];
  let stopping = false;
  const stopAll = async () => {
    for (const p of running) await p.stop().catch(() => {});
    await env.cleanup();
  };
  process.on('SIGINT', () => {
    if (stopping) process.exit(130);
    stopping = true;
    console.error('\ninterrupted: stopping the processes, dropping the bench database and Redis keys');
    void stopAll().finally(() => process.exit(130));
  });

  const rows: DeployedRow[] = [];
  const failures: string[] = [];
  const loadAverages: Record<string, number> = {};
  try {
    const prodEnv = productionEnv();
    console.log(`release (Procfile), then web and worker; logs in ${path.relative(process.cwd(), logDir)}/`);
    await runRelease(prodEnv, logDir);
    const web = await startWeb(prodEnv, logDir);
    running.push(web);
    const d: Deployed = {
      env,
      prodEnv,
      web,
      worker: await startWorker(prodEnv, logDir),
      logDir,
      connections: Number(process.env.BENCH_CONNECTIONS ?? 20),
      duration: Number(process.env.BENCH_DURATION ?? 10),
      log: (line) => console.log(line),
      seeded: (() => {
        let seeded: Promise<SeededTenant> | null = null;
        return () =>
          (seeded ??= (async () => {
            const { seedInvoices } = await import('./lib/seed');
            const { db } = await import('../../shared/db');
            const t0 = performance.now();
            const s = await seedInvoices(env.url, db(), total);
            console.log(`  seeded ${total.toLocaleString('en')} invoices in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
            return s;
          })());
      })(),
    };
    // The worker may be replaced by a benchmark: stop whichever runs at the end.
    running.push({ name: 'worker (current)', pid: 0, log: '', stop: () => d.worker.stop() });
    for (const b of selected) {
      console.log(
        `\n== ${b.name}   (load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')})`,
      );
      loadAverages[b.name] = os.loadavg()[0];
      const t0 = performance.now();
      try {
        rows.push(...(await b.run(d)));
      } catch (err) {
        failures.push(b.name);
        console.error(`  ${b.name} failed: ${(err as Error).stack ?? err}`);
      }
      console.log(`  (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    }
    const machine = `${os.availableParallelism()} vCPU ${os.cpus()[0]?.model ?? ''}, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`;
    const settings = `connections ${d.connections}, ${d.duration} s per side in ABBA slices, ${total.toLocaleString('en')} seeded invoices, ${WEBHOOK_EVENTS} webhook deliveries, ${RENDER_N} documents per kind`;
    const loads = Object.entries(loadAverages)
      .map(([n, l]) => `${n} ${l.toFixed(1)}`)
      .join(', ');
    const md = `## Deployed shape, ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC\n\nMachine: ${machine}. Settings: ${settings}. Load average (1 min) at each start: ${loads}.\n\n${markdownTable(rows)}`;
    console.log(`\n${md}`);
    const file = path.join(outDir, `${stamp}.md`);
    fs.writeFileSync(file, md);
    fs.writeFileSync(path.join(outDir, `${stamp}.json`), `${JSON.stringify({ startedAt, machine, settings, loadAverages, rows, failures }, null, 2)}\n`);
    console.log(`written: ${path.relative(process.cwd(), file)} (and .json; process logs in ${path.relative(process.cwd(), logDir)}/)`);
    if (failures.length) {
      console.error(`failed: ${failures.join(', ')}`);
      process.exitCode = 1;
    }
    if (rows.some((r) => r.name.includes('duplicate') && r.ours !== 0)) process.exitCode = 1;
  } finally {
    await stopAll();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().then(
    () => process.exit(process.exitCode ?? 0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
