/**
 * Counts the SQL statements (BEGIN/COMMIT/SAVEPOINT included) of one webhook delivery and of one
 * pipeline job, as the webhook-ingest benchmark drives them: a new Stripe payment of a new payer,
 * a new payment of a known payer (the steady state), a re-delivery of a booked one (fast path),
 * and the jobs of the two new payments. Not a benchmark: it prints counts, on a throwaway
 * database (test/bench/lib/env.ts), with no worker running, so only the request's and the job's
 * own statements are counted.
 *
 *   DATABASE_URL=… REDIS_URL=… npx tsx test/bench/countWebhookStatements.ts [--sql]
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { prepareBenchEnv } from './lib/env';
import { startOurServer } from './lib/servers';

const FIXTURE = path.resolve(import.meta.dirname, '../providers/payments/fixtures/stripe/invoice.payment_succeeded.json');
const SECRET = 'whsec_count_0123456789abcdef0123456789';
const showSql = process.argv.includes('--sql');

function stripeBody(n: number, payer: string) {
  const e = JSON.parse(fs.readFileSync(FIXTURE, 'utf8'));
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
    const { processStoredEvent } = await import('../../shared/webhooks/processStoredEvent');
    const k = db();
    let log: string[] | null = null;
    k.on('query', (q: { sql: string }) => log?.push(q.sql));
    const counted = async <T>(label: string, fn: () => Promise<T>): Promise<T> => {
      log = [];
      const r = await fn();
      // Anything still in flight after the answer (none expected) is counted too.
      await new Promise((res) => setTimeout(res, 50));
      console.log(`${label.padEnd(44)} ${String(log.length).padStart(3)} statements`);
      if (showSql) for (const s of log) console.log(`    ${s.slice(0, 160)}`);
      log = null;
      return r;
    };

    const { tenant, admin } = await createTeam();
    const ours = await startOurServer();
    try {
      const api = async (method: string, p: string, body: unknown) => {
        const res = await fetch(`${ours.url}${p}`, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${admin.token}` }, body: JSON.stringify(body) });
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
