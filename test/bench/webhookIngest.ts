/**
 * webhook-ingest: signed Stripe invoice.payment_succeeded events (built in code by
 * test/helpers/providerEvents.ts, fresh ids; HMAC as shared/providers/payments/stripe.ts, every
 * fifth delivery a re-delivery of an earlier event) POSTed to /api/payment-import/stripe/<token> on our real server, with one worker process
 * (`workers/index.ts`, as the Procfile runs it) and auto-posting on; then the same load again
 * with no worker running, accepting only, as the baseline does. Measured: events/s accepted (HTTP 200), events/s
 * fully processed (first receipt → last processed_at), p99 receipt → journal entry, and that no
 * money movement got two invoices. Baseline: a bare Koa route that verifies the same HMAC and
 * inserts one row. Targets: ≥ 1,000/s accepted, ≥ 300/s processed.
 */
import crypto from 'node:crypto';
import { cpuSplit } from './lib/cpuSplit';
import { barePool, bareApp, startBare, startOurServer } from './lib/servers';
import { BARE_WEBHOOK_TABLE, bareWebhookRoute } from './lib/bareRoutes';
import { fmtLoad, runLoad, type LoadRequest, type LoadResult } from './lib/load';
import { percentile } from './lib/measure';
import { startWorkerProcess } from './lib/workerProcess';
import type { Benchmark } from './lib/types';
import { stripePaymentEvent } from '../helpers/providerEvents';

export const SECRET = 'whsec_bench_0123456789abcdef0123456789';
/**
 * The bursts (ours with and without the worker, the baseline) are sent with wrk: autocannon took
 * 0.28–0.35 of the 2 cores while ours accepted beside the worker, CPU that neither the server nor
 * the worker got (docs/benchmarks.md, 2026-11-25 17:19). The paced 50/s run stays on autocannon,
 * which wrk cannot pace. BENCH_LOADGEN=autocannon reproduces the earlier figures.
 */
const LOADGEN = 'wrk' as const;

/** Stripe-Signature as Stripe computes it: HMAC-SHA256 of `${t}.${body}` with the whole whsec_ string. */
const sign = (body: string, t: number) => `t=${t},v1=${crypto.createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex')}`;

/** n deliveries: 80 % new events, every fifth a re-delivery (same event, signed again) of an earlier one. */
export function deliveries(n: number, path: string): { requests: LoadRequest[]; unique: number } {
  const template = stripePaymentEvent();
  const now = Math.floor(Date.now() / 1000);
  const bodies: string[] = [];
  const requests: LoadRequest[] = [];
  let seed = 42;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let i = 0; i < n; i++) {
    let body: string;
    if (i % 5 === 4 && bodies.length) {
      body = bodies[Math.floor(rand() * bodies.length)];
    } else {
      const e = structuredClone(template);
      const k = bodies.length;
      e.id = `evt_bench_${k}_${crypto.randomBytes(4).toString('hex')}`;
      e.created = now;
      const inv = e.data.object;
      inv.id = `in_bench_${k}_${crypto.randomBytes(4).toString('hex')}`;
      inv.currency = 'eur';
      inv.amount_paid = inv.amount_due = 1000 + (k % 997) * 7;
      // 50 paying counterparties: supplier resolution finds most of them after their first event.
      inv.customer = `cus_bench_${k % 50}`;
      inv.customer_email = `payer-${k % 50}@example.com`;
      inv.customer_name = `Zahler ${k % 50} GmbH`;
      inv.status_transitions = { ...inv.status_transitions, paid_at: now };
      body = JSON.stringify(e);
      bodies.push(body);
    }
    requests.push({ method: 'POST', path, headers: { 'content-type': 'application/json', 'stripe-signature': sign(body, now) }, body });
  }
  return { requests, unique: bodies.length };
}

/** Installs Stripe for a team on our server (auto-post on) and returns n signed deliveries to its URL. */
export async function stripeDeliveriesFor(baseUrl: string, token: string, n: number): Promise<{ requests: LoadRequest[]; unique: number }> {
  const api = async (method: string, p: string, body: unknown) => {
    const res = await fetch(`${baseUrl}${p}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, string>>;
  };
  const installed = await api('POST', '/api/connectors/stripe/install', { webhookSecret: SECRET });
  await api('PUT', '/api/connectors/stripe/settings', { autoPost: true });
  return deliveries(n, new URL(installed.webhookUrl).pathname);
}

/** The worker process's settings that shape this benchmark, as its config reads them from the same environment. */
async function workerSettings(): Promise<string> {
  const { loadConfig } = await import('../../shared/config');
  const { QUEUES } = await import('../../shared/queues');
  const { concurrencyFor } = await import('../../workers/worker');
  const cfg = loadConfig(process.env);
  return `WEBHOOK_BATCH_MAX ${cfg.webhookBatchMax}, WEBHOOK_BATCHES_IN_FLIGHT ${cfg.webhookBatchesInFlight}, ${concurrencyFor(cfg, QUEUES.webhooks)} webhook jobs, WORKER_NICE ${cfg.workerNice}`;
}

/** Committed store batches (two or more deliveries in one statement) the API in this process has run so far, and their deliveries. */
async function storeBatchTotals(): Promise<{ batches: number; deliveries: number }> {
  const { webhookStoreBatchDeliveries } = await import('../../shared/metrics');
  const { histogramOf } = await import('../helpers/metrics');
  const { count, sum } = await histogramOf(webhookStoreBatchDeliveries, 'committed');
  return { batches: count, deliveries: sum };
}

type Knex = ReturnType<typeof import('../../shared/db')['db']>;

/** Receipt → ledger per processed event of a tenant: its received_at to its journal entry's created_at. */
export async function toLedgerMs(k: Knex, tenantId: string): Promise<number[]> {
  const { rows } = await k.raw(
    `select extract(epoch from je.created_at - we.received_at) * 1000 as "ms"
       from webhook_events we join journal_entries je on je.tenant_id = we.tenant_id and je.source_id = we.invoice_id
      where we.tenant_id = ? and we.status = 'processed'`,
    [tenantId],
  );
  return (rows as Array<{ ms: string }>).map((r) => Number(r.ms));
}

/** Waits until none of a tenant's log rows is pending (processed, duplicate or failed). */
export async function drained(k: Knex, tenantId: string): Promise<void> {
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    const [{ pending }] = await k('webhookEvents').where({ tenantId, status: 'pending' }).count({ pending: '*' });
    if (Number(pending) === 0) return;
    if (Date.now() > deadline) throw new Error(`${pending} webhook events still pending after 10 minutes`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Invoices, distinct money movements and journal entries of a tenant's Stripe events; duplicates = invoices beyond one per movement. */
export async function bookingCheck(k: Knex, tenantId: string): Promise<{ c: Record<string, string>; duplicates: number }> {
  const { rows: checks } = await k.raw(
    `select (select count(*) from invoices where tenant_id = :t and source = 'stripe') as "invoices",
            (select count(distinct money_external_id) from webhook_events where tenant_id = :t and status in ('processed', 'duplicate')) as "movements",
            (select count(*) from (select external_id from invoices where tenant_id = :t and source = 'stripe'
                                    group by external_id having count(*) > 1) d) as "duplicated",
            (select count(*) from journal_entries where tenant_id = :t) as "entries"`,
    { t: tenantId },
  );
  const c = checks[0] as Record<string, string>;
  return { c, duplicates: Number(c.duplicated) + Math.max(0, Number(c.invoices) - Number(c.movements)) };
}

export const webhookIngest: Benchmark = {
  name: 'webhook-ingest',
  async run(ctx) {
    const n = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 2000);
    const { createTeam } = await import('../helpers/factories');
    const { db } = await import('../../shared/db');
    const k = db();
    const { tenant, admin } = await createTeam();
    const quiet = await createTeam();
    const warm = await createTeam();
    const steady = await createTeam();

    const ours = await startOurServer();
    const deliveriesFor = (token: string, count = n) => stripeDeliveriesFor(ours.url, token, count);
    let o: LoadResult;
    let alone: LoadResult;
    let done: { wallSec: number };
    let steadyLedger: number[] = [];
    try {
      // End to end: the worker runs meanwhile, in its own process as in production.
      const workers = await startWorkerProcess({ readyQueue: 'webhooks' });
      try {
        // Warm-up, as the HTTP benchmarks have one: a long-running worker has loaded and compiled
        // its modules and planned its statements; a fresh one does that during its first jobs.
        const { requests: warmup } = await deliveriesFor(warm.admin.token, 200);
        await runLoad({ url: ours.url, connections: ctx.connections, amount: warmup.length, requests: warmup, tool: LOADGEN });
        await drained(k, warm.tenant.id);
        // A steady load well below capacity (50/s for 5 s): the latency an event sees when the
        // worker keeps up, which the saturating run below cannot show (there it is queueing time).
        const { requests: paced } = await deliveriesFor(steady.admin.token, 250);
        await runLoad({ url: ours.url, connections: 5, amount: paced.length, requests: paced, rate: 50 });
        await drained(k, steady.tenant.id);
        steadyLedger = await toLedgerMs(k, steady.tenant.id);
        ctx.log(`  steady 50/s: receipt → journal entry p50 ${percentile(steadyLedger, 50).toFixed(0)} / p99 ${percentile(steadyLedger, 99).toFixed(0)} ms`);
        const { requests, unique } = await deliveriesFor(admin.token);
        ctx.log(
          `  ${n} deliveries of ${unique} distinct events, ${ctx.connections} connections (${process.env.BENCH_LOADGEN ?? LOADGEN}), 1 worker process (${await workerSettings()})`,
        );
        const t0 = performance.now();
        const workerCpu0 = workers.cpuSeconds();
        const stores0 = await storeBatchTotals();
        const load = () => runLoad({ url: ours.url, connections: ctx.connections, amount: n, requests, tool: LOADGEN });
        if (process.env.BENCH_CPU_SPLIT) {
          const split = await cpuSplit(k, { 'worker process': () => workers.pid }, load);
          o = split.result;
          ctx.log(split.report);
        } else {
          o = await load();
        }
        ctx.log(`  ours accepted: ${fmtLoad(o)}`);
        // Every delivery was stored by a committed batch or alone (a statement of its own).
        const stores = await storeBatchTotals();
        const inBatches = stores.deliveries - stores0.deliveries;
        const statements = stores.batches - stores0.batches + (o.ok - inBatches);
        ctx.log(`  store statements: ${statements} for ${o.ok} deliveries, ${(o.ok / Math.max(1, statements)).toFixed(1)} per statement`);
        // Wait for the worker: every stored row leaves pending (processed, duplicate or failed).
        await drained(k, tenant.id);
        done = { wallSec: (performance.now() - t0) / 1000 };
        const workerCpu = workers.cpuSeconds();
        const perDelivery = (sec: number) => ((sec * 1000) / n).toFixed(2);
        const [user, system] = [workerCpu.user - workerCpu0.user, workerCpu.system - workerCpu0.system];
        ctx.log(`  worker process CPU: ${perDelivery(user + system)} ms per delivery (user ${perDelivery(user)}, system ${perDelivery(system)})`);
      } finally {
        await workers.close();
      }
      // Accepting alone, as the baseline does (no worker competing for the cores); another tenant,
      // whose jobs stay queued until the run's Redis keys are deleted.
      const { requests } = await deliveriesFor(quiet.admin.token);
      const cpu0 = process.cpuUsage();
      alone = await runLoad({ url: ours.url, connections: ctx.connections, amount: n, requests, tool: LOADGEN });
      const cpu = process.cpuUsage(cpu0);
      ctx.log(`  ours accepted, no worker running: ${fmtLoad(alone)}, API CPU per delivery ${((cpu.user + cpu.system) / n).toFixed(0)} µs`);
    } finally {
      await ours.close();
    }

    const { rows: statusRows } = await k.raw('select status, count(*) as n from webhook_events where tenant_id = ? group by status', [tenant.id]);
    const byStatus = Object.fromEntries((statusRows as Array<{ status: string; n: string }>).map((r) => [r.status, Number(r.n)]));
    const { rows: win } = await k.raw(
      `select extract(epoch from max(processed_at) - min(received_at)) as "sec", count(*) as "rows"
         from webhook_events where tenant_id = ?`,
      [tenant.id],
    );
    const processedPerSec = Number(win[0].rows) / Number(win[0].sec);
    const toLedger = await toLedgerMs(k, tenant.id);
    const { c, duplicates } = await bookingCheck(k, tenant.id);
    ctx.log(`  log rows by status: ${JSON.stringify(byStatus)}`);
    // The transaction that booked a row last wrote it: rows sharing an xmin were booked in one batch.
    const { rows: booking } = await k.raw(
      "select count(*)::int as rows, count(distinct xmin::text)::int as transactions from webhook_events where tenant_id = ? and status = 'processed'",
      [tenant.id],
    );
    ctx.log(`  booked in ${booking[0].transactions} worker transactions, ${(booking[0].rows / Math.max(1, booking[0].transactions)).toFixed(1)} events each`);
    ctx.log(
      `  all done ${done!.wallSec.toFixed(1)} s after the first delivery; ${processedPerSec.toFixed(0)} events/s fully processed; receipt → journal entry p50 ${percentile(toLedger, 50).toFixed(0)} / p99 ${percentile(toLedger, 99).toFixed(0)} ms`,
    );
    ctx.log(
      `  invoices ${c.invoices}, distinct money movements ${c.movements}, journal entries ${c.entries}, external ids with > 1 invoice: ${c.duplicated}${duplicates ? '  ← DUPLICATES' : ''}`,
    );

    // Baseline: verify the same HMAC and insert one row (no queue, no pipeline).
    await k.raw(BARE_WEBHOOK_TABLE);
    const pool = barePool();
    const app = bareApp();
    app.use(bareWebhookRoute(pool, SECRET));
    const bare = await startBare(app, pool);
    const { requests: bareRequests } = deliveries(n, '/hook');
    // The same warm-up as ours had (its own events, so the measured ones are all new to it).
    const bareWarmup = deliveries(200, '/hook').requests;
    const b = await runLoad({ url: bare.url, connections: ctx.connections, amount: bareWarmup.length, requests: bareWarmup, tool: LOADGEN })
      .then(() => runLoad({ url: bare.url, connections: ctx.connections, amount: n, requests: bareRequests, tool: LOADGEN }))
      .finally(() => bare.close());
    ctx.log(`  baseline: ${fmtLoad(b)}`);

    return [
      {
        name: 'webhook accepted',
        metric: 'events/s',
        ours: o!.okPerSec,
        baseline: b.okPerSec,
        better: 'higher',
        target: { of: 'ours', value: 1000, label: '≥ 1,000/s' },
        notes: [`${o!.ok}/${n} answered 200; p99 ${o!.latencyMs.p99.toFixed(0)} ms`],
      },
      {
        name: 'webhook accepted, no worker',
        metric: 'events/s',
        ours: alone!.okPerSec,
        baseline: b.okPerSec,
        better: 'higher',
        notes: [`accepting only, as the baseline does; ${alone!.ok}/${n} answered 200; p99 ${alone!.latencyMs.p99.toFixed(0)} ms`],
      },
      {
        name: 'webhook processed',
        metric: 'events/s',
        ours: processedPerSec,
        baseline: null,
        better: 'higher',
        target: { of: 'ours', value: 300, label: '≥ 300/s' },
        notes: [`all ${n} done ${done!.wallSec.toFixed(1)} s after the first delivery; ${JSON.stringify(byStatus)}`],
      },
      { name: 'webhook receipt→ledger p99', metric: 'ms', ours: percentile(toLedger, 99), baseline: null, better: 'lower' },
      { name: 'webhook receipt→ledger p99 at 50/s', metric: 'ms', ours: percentile(steadyLedger, 99), baseline: null, better: 'lower' },
      {
        name: 'webhook duplicates',
        metric: 'invoices',
        ours: duplicates,
        baseline: null,
        better: 'lower',
        target: { of: 'ours', value: 0, label: '= 0' },
        notes: [`${c.invoices} invoices for ${c.movements} money movements, ${c.entries} journal entries`],
      },
    ];
  },
};
