/**
 * Profile helper (on demand, not part of npm run bench), two modes:
 *
 * - default: our server alone accepting the webhook-ingest deliveries (no worker), so
 *   `node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx test/bench/profileWebhook.ts` shows only
 *   the accept path.
 * - `--worker`: the deliveries are accepted first (no worker), then this process starts the
 *   webhooks queue's BullMQ worker and its outbox relay (startWorkers, as workers/index.ts does)
 *   and books the backlog, so `node --cpu-prof … test/bench/profileWebhook.ts --worker` shows the
 *   worker's booking path (the accept phase is in the profile too: look at the booking functions).
 *   Prints the booking's CPU per event (this process) and events/s (first to last processed_at).
 *   PROFILE_OUT=<file.cpuprofile> writes the CPU profile of the booking phase alone there.
 *
 * - `--paced`: a worker process as production runs it (workers/index.ts), and 250 deliveries at a
 *   steady 50/s, as the benchmark's receipt → ledger row; prints where each event's time went:
 *   received → outbox row relayed (the relay's transaction began) → BullMQ job added → started → booking transaction (processed_at, the
 *   journal entry's created_at: both the transaction's start) → job finished.
 *
 * BENCH_WEBHOOK_EVENTS sets the number of deliveries (default 10,000; 2,000 with --worker).
 */
import { prepareBenchEnv } from './lib/env';
import { startOurServer } from './lib/servers';
import { fmtLoad, runLoad } from './lib/load';
import { drained, stripeDeliveriesFor } from './webhookIngest';

const worker = process.argv.includes('--worker');
const paced = process.argv.includes('--paced');
const env = await prepareBenchEnv();
try {
  if (paced) {
    await pacedBreakdown();
    process.exit(0);
  }
  const n = Number(process.env.BENCH_WEBHOOK_EVENTS ?? (worker ? 2000 : 10_000));
  const { createTeam } = await import('../helpers/factories');
  const { tenant, admin } = await createTeam();
  const ours = await startOurServer();
  const { requests } = await stripeDeliveriesFor(ours.url, admin.token, n);
  const cpu0 = process.cpuUsage();
  const r = await runLoad({ url: ours.url, connections: 20, amount: n, requests });
  const cpu = process.cpuUsage(cpu0);
  console.log(
    `${fmtLoad(r)}, ${((cpu.user + cpu.system) / n).toFixed(0)} µs CPU per delivery (user ${(cpu.user / n).toFixed(0)}, system ${(cpu.system / n).toFixed(0)})`,
  );
  await ours.close();
  if (worker) {
    const { db } = await import('../../shared/db');
    const { startWorkers } = await import('../../workers/worker');
    const k = db();
    // PostgreSQL's share: CPU of this database's backends (the worker's pool and its relay's LISTEN connection).
    const backendsCpu = async (): Promise<Map<number, number>> => {
      const { rows: pids } = await k.raw('select pid from pg_stat_activity where datname = current_database()');
      const { readFileSync } = await import('node:fs');
      const cpu = new Map<number, number>();
      for (const { pid } of pids as Array<{ pid: number }>) {
        try {
          const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
          cpu.set(pid, ((Number(f[11]) + Number(f[12])) * 1e6) / 100);
        } catch {
          // not on this machine, or gone
        }
      }
      return cpu;
    };
    const pg0 = await backendsCpu();
    const w0 = process.cpuUsage();
    const { Session } = await import('node:inspector/promises');
    const session = new Session();
    if (process.env.PROFILE_OUT) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    const running = await startWorkers({ queues: ['webhooks'], schedule: false, sandbox: false });
    await drained(k, tenant.id);
    const wc = process.cpuUsage(w0);
    if (process.env.PROFILE_OUT) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(process.env.PROFILE_OUT, JSON.stringify((await session.post('Profiler.stop')).profile));
    }
    const pg1 = await backendsCpu();
    const pgUs = [...pg1].reduce((a, [pid, us]) => a + us - (pg0.get(pid) ?? 0), 0);
    await running.close();
    const { rows } = await k.raw(
      `select extract(epoch from max(processed_at) - min(processed_at)) as "sec", count(*)::int as "rows",
              count(*) filter (where status = 'processed')::int as "processed", count(distinct xmin::text)::int as "transactions"
         from webhook_events where tenant_id = ?`,
      [tenant.id],
    );
    const { sec, rows: booked, processed, transactions } = rows[0];
    const { webhookBatchEvents } = await import('../../shared/metrics');
    const { histogramOf } = await import('../helpers/metrics');
    const [committed, rolledBack] = [await histogramOf(webhookBatchEvents, 'committed'), await histogramOf(webhookBatchEvents, 'rolled_back')];
    const fmt = (h: { count: number; sum: number }) => `${h.count} with ${h.sum} events`;
    console.log(
      `booked ${booked} events (${processed} processed) in ${Number(sec).toFixed(2)} s: ${(booked / Number(sec)).toFixed(0)}/s; ` +
        `${transactions} transactions (batches committed ${fmt(committed)}, rolled back ${fmt(rolledBack)}); worker CPU ${((wc.user + wc.system) / booked).toFixed(0)} µs per event (user ${(wc.user / booked).toFixed(0)}, system ${(wc.system / booked).toFixed(0)}), ` +
        `PostgreSQL backends ${(pgUs / booked).toFixed(0)} µs per event`,
    );
  }
} finally {
  await env.cleanup();
}
process.exit(0);

async function pacedBreakdown() {
  const { createTeam } = await import('../helpers/factories');
  const { db } = await import('../../shared/db');
  const { percentile } = await import('./lib/measure');
  const { startWorkerProcess } = await import('./lib/workerProcess');
  const { getQueue } = await import('../../shared/queues');
  const k = db();
  const ours = await startOurServer();
  const workers = await startWorkerProcess({ readyQueue: 'webhooks', env: { LOG_LEVEL: 'info' } });
  try {
    const warm = await createTeam();
    const { requests: warmup } = await stripeDeliveriesFor(ours.url, warm.admin.token, 200);
    await runLoad({ url: ours.url, connections: 20, amount: warmup.length, requests: warmup });
    await drained(k, warm.tenant.id);
    const { tenant, admin } = await createTeam();
    const { requests } = await stripeDeliveriesFor(ours.url, admin.token, 250);
    await runLoad({ url: ours.url, connections: 5, amount: requests.length, requests, rate: 50 });
    await drained(k, tenant.id);
    const { rows } = await k.raw(
      `select we.id, extract(epoch from we.received_at) * 1000 as received, extract(epoch from o.enqueued_at) * 1000 as relayed,
              extract(epoch from we.processed_at) * 1000 as booked, extract(epoch from je.created_at) * 1000 as ledger
         from webhook_events we join outbox o on o.job_id = 'webhook-' || we.id
         join journal_entries je on je.tenant_id = we.tenant_id and je.source_id = we.invoice_id
        where we.tenant_id = ? and we.status = 'processed'`,
      [tenant.id],
    );
    const queue = getQueue('webhooks');
    const parts: Record<string, number[]> = {
      'received → relayed': [],
      'relayed → job added': [],
      'job added → job started': [],
      'job started → booking trx': [],
      'booking trx → job finished': [],
      'received → ledger': [],
    };
    for (const r of rows as Array<Record<string, string>>) {
      const job = await queue.getJob(`webhook-${r.id}`);
      const [received, relayed, booked, ledger] = [r.received, r.relayed, r.booked, r.ledger].map(Number);
      parts['received → relayed'].push(relayed - received);
      parts['received → ledger'].push(ledger - received);
      if (job?.processedOn && job.finishedOn) {
        parts['relayed → job added'].push(job.timestamp - relayed);
        parts['job added → job started'].push(job.processedOn - job.timestamp);
        parts['job started → booking trx'].push(booked - job.processedOn);
        parts['booking trx → job finished'].push(job.finishedOn - booked);
      }
    }
    for (const [name, v] of Object.entries(parts)) {
      const slowest = [...v].sort((x, y) => y - x).slice(0, 5);
      console.log(
        `${name.padEnd(28)} p50 ${percentile(v, 50).toFixed(1)} / p95 ${percentile(v, 95).toFixed(1)} / p99 ${percentile(v, 99).toFixed(1)} ms (${v.length}); slowest ${slowest.map((x) => x.toFixed(0)).join(', ')}`,
      );
    }
  } finally {
    await workers.close();
    await ours.close();
  }
}
