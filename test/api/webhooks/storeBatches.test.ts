import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { histogramOf } from '../../helpers/metrics';
import { waitUntil } from '../../helpers/waitUntil';
import { holdLocks } from '../../helpers/heldLock';
import {
  bankDelivery,
  bankEvent,
  deliver,
  install,
  stripeDelivery,
  stripeFailedEvent,
  stripePaymentEvent,
  waitForLogRows,
  withWebhookServer,
} from '../../helpers/webhookFactory';
import { config } from '../../../shared/config';
import { db } from '../../../shared/db';
import { registry, webhookStoreBatchDeliveries } from '../../../shared/metrics';
import { STORE_SQL } from '../../../shared/webhooks/ingest';

/**
 * Verified deliveries stored in batches (shared/webhooks/ingest.ts): the deliveries an API process
 * accepts while a store statement runs go together in the next one. To make a batch's members
 * certain, a test holds the first delivery's statement: a transaction of its own locks the
 * tenant's row FOR UPDATE, which the statement's foreign-key check waits for. Deliveries sent
 * meanwhile queue (the webhook_store_waiting gauge counts them) and form the next statement.
 * Rows of one statement share received_at, the statement's transaction time.
 */
const env = withWebhookServer();
const SECRET = 'whsec_test_store_batches_0123456789';

async function waiting(): Promise<number> {
  const metric = await registry.getSingleMetric('webhook_store_waiting')!.get();
  return metric.values[0]?.value ?? 0;
}

type Delivery = { body: string; headers: Record<string, string> };

/**
 * Sends `first` and holds its store statement, sends `together` meanwhile, and releases the hold
 * once all of them wait for the next statement: they are that statement's rows.
 */
async function sendBehindHeldStatement(tenantId: string, first: Delivery & { to: { path: string } }, together: Array<Delivery & { to: { path: string } }>) {
  const send = (d: Delivery & { to: { path: string } }) => deliver(env.server.url, d.to.path, d.body, d.headers);
  const hold = await holdLocks((trx) => trx('tenants').where({ id: tenantId }).forUpdate().first('id'));
  try {
    const firstResponse = send(first);
    await hold.blocked('the first store statement to wait for the held lock');
    const responses = together.map(send);
    await waitUntil(async () => (await waiting()) === together.length, 'the deliveries to queue for the next statement');
    await hold.release();
    return { first: await firstResponse, answered: await Promise.all(responses) };
  } finally {
    await hold.release();
  }
}
async function installFor(slug: 'stripe' | 'bank') {
  const team = await createTeam();
  const { path } = await install(env.server.url, team.admin.token, slug, { webhookSecret: SECRET });
  await client(env.server.url, { token: team.admin.token }).put(`/api/connectors/${slug}/settings`, { autoPost: true });
  return { ...team, path };
}

describe('webhook store batches', () => {
  it('deliveries of two tenants that arrive together are stored by one statement, each row and job its own tenant’s', async () => {
    const a = await installFor('stripe');
    const b = await installFor('bank');
    // Booked before: a movement (its invoice exists) and a non-booking event (processed), so that
    // the batch holds both kinds of duplicate among new events.
    const booked = stripeDelivery(SECRET, stripePaymentEvent({ amount: 1500 }));
    const failedPayment = stripeDelivery(SECRET, stripeFailedEvent());
    for (const d of [booked, failedPayment]) expect((await deliver(env.server.url, a.path, d.body, d.headers)).status).toBe(200);
    const earlier = await waitForLogRows(a.tenant.id, 'stripe', 2);
    expect(earlier.map((r) => r.status)).toEqual(['processed', 'processed']);

    const before = await histogramOf(webhookStoreBatchDeliveries, 'committed');
    const together = [
      { ...booked, to: a, expect: 'duplicate' },
      ...Array.from({ length: 6 }, (_, i) => ({ ...stripeDelivery(SECRET, stripePaymentEvent({ amount: 2000 + i })), to: a, expect: 'pending' })),
      { ...failedPayment, to: a, expect: 'duplicate' },
      ...Array.from({ length: 6 }, () => ({ ...bankDelivery(SECRET, bankEvent()), to: b, expect: 'pending' })),
    ];
    const { first, answered } = await sendBehindHeldStatement(
      a.tenant.id,
      { ...stripeDelivery(SECRET, stripePaymentEvent({ amount: 1000 })), to: a },
      together,
    );
    expect(first.status).toBe(200);
    expect(answered.map((r) => [r.status, r.body.status])).toEqual(together.map((d) => [200, d.expect]));
    expect(await histogramOf(webhookStoreBatchDeliveries, 'committed')).toEqual({ count: before.count + 1, sum: before.sum + together.length });

    // One statement: its rows share received_at; each row is its own tenant's, with its own connector.
    const eventIdOf = (d: { body: string }) => JSON.parse(d.body).id as string;
    const batchRows = await db()('webhookEvents')
      .whereIn('tenantId', [a.tenant.id, b.tenant.id])
      .whereIn('externalId', together.map(eventIdOf))
      .whereNotIn(
        'id',
        earlier.map((r) => r.id),
      );
    expect(batchRows).toHaveLength(together.length);
    expect(new Set(batchRows.map((r) => r.receivedAt.toISOString())).size).toBe(1);
    const connectors = await db()('connectorInstallations').whereIn('tenantId', [a.tenant.id, b.tenant.id]).select('id', 'tenantId');
    for (const r of batchRows) {
      expect(r.tenantId).toBe(together.find((d) => eventIdOf(d) === r.externalId)!.to.tenant.id);
      expect(connectors.find((c) => c.id === r.connectorId)?.tenantId).toBe(r.tenantId);
    }
    // The duplicates have no job (the booked movement's points at its invoice); every other row has exactly one.
    expect(batchRows.find((r) => r.externalId === eventIdOf(booked))).toMatchObject({ status: 'duplicate', invoiceId: earlier[0].invoiceId });
    expect(batchRows.find((r) => r.externalId === eventIdOf(failedPayment))).toMatchObject({ status: 'duplicate', invoiceId: null });
    const jobs = await db()('outbox')
      .whereIn(
        'jobId',
        batchRows.map((r) => `webhook-${r.id}`),
      )
      .select('jobId', 'payload');
    expect(jobs).toHaveLength(together.length - 2);
    for (const j of jobs) {
      const row = batchRows.find((r) => `webhook-${r.id}` === j.jobId)!;
      expect(j.payload).toEqual({ eventRowId: row.id, tenantId: row.tenantId });
    }

    // And the workers book them: A's 2 earlier, the first, 6 new and 2 duplicates; B's 6.
    const doneA = await waitForLogRows(a.tenant.id, 'stripe', 11, 60_000);
    expect(doneA.filter((r) => r.status === 'processed')).toHaveLength(9);
    expect(await db()('invoices').where({ tenantId: a.tenant.id })).toHaveLength(8);
    const doneB = await waitForLogRows(b.tenant.id, 'bank', 6, 60_000);
    expect(doneB.every((r) => r.status === 'processed')).toBe(true);
    expect(await db()('invoices').where({ tenantId: b.tenant.id })).toHaveLength(6);
  }, 120_000);

  it('a batch that cannot be stored is stored one delivery at a time: only the bad delivery gets 503, the others 200', async () => {
    const good = await installFor('bank');
    const gone = await installFor('bank');
    // The API caches a token's installation for a few seconds; a delivery puts it in the cache,
    // then its row is deleted behind the cache's back: its deliveries' rows now break a foreign key.
    const warm = bankDelivery(SECRET, bankEvent());
    expect((await deliver(env.server.url, gone.path, warm.body, warm.headers)).status).toBe(200);
    await waitForLogRows(gone.tenant.id, 'bank', 1);
    await db()('connectorInstallations').where({ tenantId: gone.tenant.id }).delete();

    const before = await histogramOf(webhookStoreBatchDeliveries, 'rolled_back');
    const together = [
      ...Array.from({ length: 5 }, () => ({ ...bankDelivery(SECRET, bankEvent()), to: good, expect: 200 })),
      ...Array.from({ length: 2 }, () => ({ ...bankDelivery(SECRET, bankEvent()), to: gone, expect: 503 })),
      ...Array.from({ length: 5 }, () => ({ ...bankDelivery(SECRET, bankEvent()), to: good, expect: 200 })),
    ];
    const { first, answered } = await sendBehindHeldStatement(good.tenant.id, { ...bankDelivery(SECRET, bankEvent()), to: good }, together);
    expect(first.status).toBe(200);
    expect(answered.map((r) => r.status)).toEqual(together.map((d) => d.expect));
    const refused = answered.find((r) => r.status === 503)!;
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    expect(await histogramOf(webhookStoreBatchDeliveries, 'rolled_back')).toEqual({ count: before.count + 1, sum: before.sum + together.length });

    // Each good delivery stored and booked once; nothing of the refused ones is stored.
    const rows = await waitForLogRows(good.tenant.id, 'bank', 11, 60_000);
    expect(rows.every((r) => r.status === 'processed')).toBe(true);
    expect(await db()('invoices').where({ tenantId: good.tenant.id })).toHaveLength(11);
    expect(await db()('webhookEvents').where({ tenantId: gone.tenant.id })).toHaveLength(1);
  }, 120_000);

  it('the store statement looks up each row’s duplicates by their external ids, in the generic plan of the prepared statement too', async () => {
    // The plan a prepared statement keeps: parameters unknown, so nothing but the query's shape
    // keeps the lookups per row. Sequential scans are off so that the small test tables do not
    // decide; what is checked is which columns each lookup can use.
    let i = 0;
    const text = STORE_SQL.replace(/\?/g, () => `$${++i}`);
    const c = new pg.Client({ connectionString: config().databaseUrl });
    await c.connect();
    try {
      await c.query('begin');
      await c.query('set local plan_cache_mode = force_generic_plan');
      await c.query('set local enable_seqscan = off');
      // On the test database's few invoices per tenant, any index on tenant_id (the sync index, the
      // DATEV check's rates index, the type/date index, …) ties with the unique external-id index,
      // and which one wins depends on the statistics of the moment; at real volumes the unique
      // index, equal on all three columns, is far cheaper. So every other index of invoices is
      // dropped inside this rolled-back transaction: what is checked is that the statement's shape
      // lets a lookup per row use all three columns.
      const { rows: others } = await c.query(
        "select indexname from pg_indexes where schemaname = current_schema() and tablename = 'invoices' and indexname not in ('invoices_pkey', 'invoices_external_unique')",
      );
      for (const { indexname } of others) await c.query(`drop index ${pg.escapeIdentifier(indexname)}`);
      await c.query(`prepare store_plan(text, text, text, text, text, text) as ${text}`);
      const { rows } = await c.query("explain (costs off) execute store_plan('[]', 'p', 'webhooks', 'n', 'outbox_plan_test', 'p')");
      const plan = rows.map((r) => r['QUERY PLAN'] as string).join('\n');
      expect(plan).toMatch(/Index Cond: \(\(tenant_id = v\.tenant_id\) AND \(source = v\.provider\) AND \(external_id = m\.external_id\)\)/);
      // Which webhook_events index serves it depends on the table's statistics (with them, the one on
      // the external id); either way it is a lookup per row, never a scan of all processed rows.
      expect(plan).toMatch(
        /Index Scan using webhook_events_\w+ on webhook_events w\n\s+Index Cond: \(\(tenant_id = v\.tenant_id\) AND \(provider = v\.provider\)/,
      );
      expect(plan).not.toMatch(/Anti Join|hashed SubPlan|Materialize/);
    } finally {
      await c.query('rollback');
      await c.end();
    }
  });
});
