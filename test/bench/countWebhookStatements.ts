/**
 * Counts the SQL statements (BEGIN/COMMIT/SAVEPOINT included) of one webhook delivery and of one
 * pipeline job, as the webhook-ingest benchmark drives them: a new Stripe payment of a new payer,
 * a new payment of a known payer (the steady state), a re-delivery of a booked one (fast path),
 * and the jobs of the two new payments, then a known-payer job after 36 more (JIT warm), then a
 * batch of 20 known-payer jobs in one transaction (as the worker books a backlog). Not a
 * benchmark: it prints counts and each statement's time to its answer (serial, idle machine), on
 * a throwaway database (test/bench/lib/env.ts), with no worker running, so only the request's and
 * the job's own statements are counted.
 *
 *   DATABASE_URL=… REDIS_URL=… npx tsx test/bench/countWebhookStatements.ts [--sql]
 */
import crypto from 'node:crypto';
import { prepareBenchEnv } from './lib/env';
import { startOurServer } from './lib/servers';
import { stripePaymentEvent } from '../helpers/providerEvents';

const SECRET = 'whsec_count_0123456789abcdef0123456789';
const showSql = process.argv.includes('--sql');

function stripeBody(n: number, payer: string) {
  const e = stripePaymentEvent();
  const now = Math.floor(Date.now() / 1000);
  e.id = `evt_count_${n}_${crypto.randomBytes(4).toString('hex')}`;
  e.created = now;
  const inv = e.data.object;
  inv.id = `in_count_${n}_${crypto.randomBytes(4).toString('hex')}`;
  inv.currency = 'eur';
  inv.customer = `cus_${payer}`;
  inv.customer_email = `${payer}@example.com`;
  inv.customer_name = `${payer} GmbH`;
  inv.status_transitions = { ...inv.status_transitions, paid_at: now };
  return JSON.stringify(e);
}

async function main() {
  const env = await prepareBenchEnv();
  try {
    const { db } = await import('../../shared/db');
    const { createTeam } = await import('../helpers/factories');
    const { bookEvent, bookEventBatch } = await import('../../workers/jobs/webhooks/eventBatches');
    const processStoredEvent = (eventRowId: string, tenantId: string) => bookEvent({ eventRowId, tenantId });
    const k = db();
    // Each statement with its time from sending to the answer (knex's query / query-response).
    let log: { sql: string; uid: string; ms?: number; t0: number }[] | null = null;
    k.on('query', (q: { sql: string; __knexQueryUid: string }) => log?.push({ sql: q.sql, uid: q.__knexQueryUid, t0: performance.now() }));
    k.on('query-response', (_r: unknown, q: { __knexQueryUid: string }) => {
      const e = log?.find((x) => x.uid === q.__knexQueryUid && x.ms === undefined);
      if (e) e.ms = performance.now() - e.t0;
    });
    const counted = async <T>(label: string, fn: () => Promise<T>): Promise<T> => {
      log = [];
      const t0 = performance.now();
      const r = await fn();
      const ms = performance.now() - t0;
      // Anything still in flight after the answer (none expected) is counted too.
      await new Promise((res) => setTimeout(res, 50));
      const inSql = log.reduce((a, x) => a + (x.ms ?? 0), 0);
      console.log(`${label.padEnd(44)} ${String(log.length).padStart(3)} statements, ${ms.toFixed(1)} ms (${inSql.toFixed(1)} ms waiting for answers)`);
      if (showSql) for (const s of log) console.log(`    ${(s.ms ?? NaN).toFixed(2).padStart(6)} ms  ${s.sql.slice(0, 150).replace(/\s+/g, ' ')}`);
      log = null;
      return r;
    };

    const { tenant, admin } = await createTeam();
    const ours = await startOurServer();
    try {
      const api = async (method: string, p: string, body: unknown) => {
        const res = await fetch(`${ours.url}${p}`, {
          method,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${admin.token}` },
          body: JSON.stringify(body),
        });
        if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
        return res.json() as Promise<Record<string, string>>;
      };
      const installed = await api('POST', '/api/connectors/stripe/install', { webhookSecret: SECRET });
      await api('PUT', '/api/connectors/stripe/settings', { autoPost: true });
      const hookPath = new URL(installed.webhookUrl).pathname;
      const deliver = async (body: string) => {
        const t = Math.floor(Date.now() / 1000);
        const sig = `t=${t},v1=${crypto.createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex')}`;
        const res = await fetch(`${ours.url}${hookPath}`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': sig }, body });
        if (res.status !== 200) throw new Error(`delivery: ${res.status} ${await res.text()}`);
        return res.json();
      };
      const lastRow = async () => (await k('webhookEvents').where({ tenantId: tenant.id }).orderBy('receivedAt', 'desc').first('id')).id as string;

      // Warm-up: the first delivery of a process pays one-off lookups (and the token cache, if any).
      const warm = stripeBody(0, 'warmup');
      await deliver(warm);
      await processStoredEvent(await lastRow(), tenant.id);

      const first = stripeBody(1, 'payer-a');
      await counted('delivery: new event', () => deliver(first));
      const firstRow = await lastRow();
      await counted('job: new payer (supplier created)', () => processStoredEvent(firstRow, tenant.id));
      const second = stripeBody(2, 'payer-a');
      await counted('delivery: new event, known payer', () => deliver(second));
      const secondRow = await lastRow();
      await counted('job: known payer (steady state)', () => processStoredEvent(secondRow, tenant.id));
      await counted('delivery: re-delivery (duplicate fast path)', () => deliver(second));
      // Steady state after the JIT has warmed up: more known-payer jobs, the last one printed.
      for (let i = 3; i < 40; i++) {
        await deliver(stripeBody(i, 'payer-a'));
        const row = await lastRow();
        if (i === 39) await counted('job: known payer, 37th', () => processStoredEvent(row, tenant.id));
        else await processStoredEvent(row, tenant.id);
      }
      // A batch as the worker books a backlog (workers/jobs/webhooks/eventBatches.ts): 20 events of
      // known payers in one transaction.
      const batch: { eventRowId: string; tenantId: string }[] = [];
      for (let i = 40; i < 60; i++) {
        await deliver(stripeBody(i, `payer-${i % 5}`));
        batch.push({ eventRowId: await lastRow(), tenantId: tenant.id });
      }
      for (let p = 0; p < 5; p++) {
        await deliver(stripeBody(100 + p, `payer-${p}`));
        await processStoredEvent(await lastRow(), tenant.id);
      }
      await counted('batch: 20 jobs, known payers', () => bookEventBatch(batch));
    } finally {
      await ours.close();
    }
  } finally {
    await env.cleanup();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
