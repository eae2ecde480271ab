import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { createTeam } from '../helpers/factories';
import { storePendingBankEvent, suffix, workersPerTest } from '../helpers/webhookFactory';
import { loadConfig } from '../../shared/config';
import { db } from '../../shared/db';
import { webhookBatchEvents } from '../../shared/metrics';
import { getQueue, QUEUES } from '../../shared/queues';
import { PermanentPipelineError } from '../../shared/commands/webhooks/errors';
import type { StoredEventOutcome as ProcessOutcome } from '../../shared/commands/webhooks/bookStoredEvent';
import { BATCH_LOCK_TIMEOUT_MS, createEventBatches } from '../../workers/jobs/webhooks/eventBatches';
import { concurrencyFor, startWorkers } from '../../workers/worker';
import { waitUntil } from '../helpers/waitUntil';
import { histogramOf } from '../helpers/metrics';
import { createSupplier } from '../helpers/invoiceFactory';
import { normalizedPayment } from '../helpers/normalizedEvents';
import type { NormalizedEvent } from '../../shared/providers/payments/types';

/**
 * Webhook events booked in batches (workers/jobs/webhooks/eventBatches.ts): several events in one
 * transaction, and when a batch cannot commit, each event alone. Events are stored as ingest
 * stores them (verified, normalized, pending). Which transaction wrote a row is read from its
 * xmin: rows written by one transaction share it.
 */
const running = workersPerTest();

/** How many transactions wrote the final state of these log rows. */
async function writingTransactions(ids: string[]): Promise<number> {
  const { rows } = await db().raw('select count(distinct xmin::text)::int as n from webhook_events where id = any(?)', [ids]);
  return rows[0].n;
}

type StoredRef = Awaited<ReturnType<typeof storePendingBankEvent>>;

/**
 * Books three events in one batch while `hold` keeps a lock the middle one needs (taken in a
 * transaction of the test's): the other two are booked at once, the middle one stays pending
 * until the lock is released, then all three are processed.
 */
async function bookWhileHeld(refs: StoredRef[], hold: (lock: Knex.Transaction) => Promise<unknown>): Promise<void> {
  const lock = await db().transaction();
  try {
    await hold(lock);
    const pending = batchAll(refs, settle);
    await waitUntil(
      async () => (await db()('webhookEvents').whereIn('id', [refs[0].eventRowId, refs[2].eventRowId]).where({ status: 'processed' })).length === 2,
      'the two free events booked',
      10_000,
    );
    expect((await db()('webhookEvents').where({ id: refs[1].eventRowId }).first()).status).toBe('pending');
    await lock.commit();
    const results = await Promise.all(pending);
    expect(results.map((r) => ('ok' in r ? r.ok.status : r.err))).toEqual(['processed', 'processed', 'processed']);
  } finally {
    if (!lock.isCompleted()) await lock.rollback();
  }
}

const settle = (p: Promise<ProcessOutcome>) =>
  p.then(
    (o) => ({ ok: o }),
    (err: unknown) => ({ err }),
  );

describe('webhook event batches', () => {
  it('events handed over together are booked in one transaction, each once', async () => {
    const { tenant } = await createTeam();
    const before = await batchMetric('committed');
    const refs = await Promise.all(Array.from({ length: 6 }, () => storePendingBankEvent(tenant.id)));
    const outcomes = await Promise.all(batchAll(refs));
    expect(outcomes.map((o) => o.status)).toEqual(Array(6).fill('processed'));
    expect(await writingTransactions(refs.map((r) => r.eventRowId))).toBe(1);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(6);
    expect(await db()('webhookEvents').where({ tenantId: tenant.id, status: 'processed' })).toHaveLength(6);
    expect(await batchMetric('committed')).toEqual({ count: before.count + 1, sum: before.sum + 6 });
  });

  it('two events of one money movement in one batch: one invoice, the second ends duplicate', async () => {
    const { tenant } = await createTeam();
    const paymentId = `pay_${suffix()}`;
    const first = await storePendingBankEvent(tenant.id, { paymentId });
    const second = await storePendingBankEvent(tenant.id, { paymentId });
    const outcomes = await Promise.all(batchAll([first, second]));
    expect(outcomes.map((o) => o.status)).toEqual(['processed', 'duplicate']);
    expect(outcomes[1].invoiceId).toBe(outcomes[0].invoiceId);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(1);
  });

  it('a row handed over twice in one batch is booked once; an unknown row is skipped', async () => {
    const { tenant } = await createTeam();
    const [a, b] = [await storePendingBankEvent(tenant.id), await storePendingBankEvent(tenant.id)];
    const unknown = { eventRowId: randomUUID(), tenantId: tenant.id };
    const outcomes = await Promise.all(batchAll([a, b, a, unknown]));
    expect(outcomes.map((o) => [o.status, o.reason])).toEqual([
      ['processed', undefined],
      ['processed', undefined],
      ['skipped', 'already processed'],
      ['skipped', 'missing'],
    ]);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(2);
  });

  it('an event that cannot be booked fails alone: the others of its batch are booked', async () => {
    const { tenant } = await createTeam();
    const good = await Promise.all([storePendingBankEvent(tenant.id), storePendingBankEvent(tenant.id), storePendingBankEvent(tenant.id)]);
    const bad = await storePendingBankEvent(tenant.id, { amount: '1.234', currency: 'KWD' });
    const before = await batchMetric('rolled_back');
    const refs = [good[0], bad, good[1], good[2]];
    const results = await Promise.all(batchAll(refs, settle));
    expect(results[1]).toMatchObject({ err: expect.any(PermanentPipelineError) });
    for (const i of [0, 2, 3]) expect(results[i]).toMatchObject({ ok: { status: 'processed' } });
    // Each good event committed alone after the batch rolled back; the bad one wrote nothing.
    expect(await writingTransactions(good.map((r) => r.eventRowId))).toBe(3);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(3);
    expect((await db()('webhookEvents').where({ id: bad.eventRowId }).first()).status).toBe('pending');
    expect(await batchMetric('rolled_back')).toEqual({ count: before.count + 1, sum: before.sum + 4 });
  });

  it('a money lock held elsewhere: the batch leaves that event out and commits the others at once; the held one is booked alone when its lock is free', async () => {
    const { tenant } = await createTeam();
    const refs = await Promise.all([storePendingBankEvent(tenant.id), storePendingBankEvent(tenant.id), storePendingBankEvent(tenant.id)]);
    const held = refs[1];
    const before = await batchMetric('rolled_back');
    await bookWhileHeld(refs, (lock) =>
      lock.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`webhook:money:${tenant.id}:bank:${held.moneyExternalId}`]),
    );
    // The free two in the batch's transaction, the held one in its own; no batch rolled back.
    expect(await writingTransactions([refs[0].eventRowId, refs[2].eventRowId])).toBe(1);
    expect(await writingTransactions(refs.map((r) => r.eventRowId))).toBe(2);
    expect(await batchMetric('rolled_back')).toEqual(before);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(3);
  });

  it(`a log row locked elsewhere: the batch gives up after ${BATCH_LOCK_TIMEOUT_MS} ms, the others are booked at once, the held one when its lock is free`, async () => {
    const { tenant } = await createTeam();
    const refs = await Promise.all([storePendingBankEvent(tenant.id), storePendingBankEvent(tenant.id), storePendingBankEvent(tenant.id)]);
    const held = refs[1];
    const before = await batchMetric('rolled_back');
    await bookWhileHeld(refs, (lock) => lock('webhookEvents').where({ id: held.eventRowId }).forUpdate().first());
    expect(await writingTransactions(refs.map((r) => r.eventRowId))).toBe(3);
    expect(await batchMetric('rolled_back')).toEqual({ count: before.count + 1, sum: before.sum + 3 });
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(3);
  });

  // Two event batchers, as two worker processes have, or one with two batches in flight (the
  // second half handed over a turn later, so it forms a second batch while the first runs): each
  // batch runs on its own connection. They contend for the same money and payer locks, so usually
  // one batch gives up (lock_timeout) and its events run one by one: both paths end in the same bookings.
  it.each([
    [
      'two processes batching the same burst',
      (refs: StoredRef[]) => {
        const [a, b] = [createEventBatches(20), createEventBatches(20)];
        return Promise.all(refs.map((r, i) => settle((i % 2 ? a : b).run(r))));
      },
    ],
    [
      'one process with two batches in flight',
      async (refs: StoredRef[]) => {
        const batches = createEventBatches(20, 2);
        const first = refs.slice(0, 18).map((r) => settle(batches.run(r)));
        await new Promise((resolve) => setImmediate(resolve));
        const second = refs.slice(18).map((r) => settle(batches.run(r)));
        return Promise.all([...first, ...second]);
      },
    ],
  ] as const)('%s (redeliveries, shared new payers): every movement booked once, every job settles', async (_name, handOver) => {
    const { tenant } = await createTeam();
    // 12 money movements of 4 new payers, each delivered 3 times: 36 events, stored in random order.
    const movements = Array.from({ length: 12 }, (_, i) => ({ paymentId: `pay_${suffix()}`, counterparty: { name: `Zahler ${i % 4} ${tenant.id}` } }));
    const deliveries = movements.flatMap((m) => [m, m, m]).sort(() => Math.random() - 0.5);
    const refs: StoredRef[] = [];
    for (const m of deliveries) refs.push(await storePendingBankEvent(tenant.id, m));
    const results = await handOver(refs);
    expect(results.filter((r) => 'err' in r)).toEqual([]);
    const statuses = results.map((r) => ('ok' in r ? r.ok.status : 'error'));
    expect(statuses.filter((st) => st === 'processed')).toHaveLength(12);
    expect(statuses.filter((st) => st === 'duplicate')).toHaveLength(24);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(12);
    expect(await db()('suppliers').where({ tenantId: tenant.id })).toHaveLength(4);
    expect(await db()('webhookEvents').where({ tenantId: tenant.id, status: 'pending' })).toHaveLength(0);
  });

  it('in a running worker, a burst of webhook jobs is booked in batches: fewer transactions than events, every job completed once', async () => {
    const { tenant } = await createTeam();
    const refs = await Promise.all(Array.from({ length: 30 }, () => storePendingBankEvent(tenant.id)));
    await getQueue(QUEUES.webhooks).addBulk(refs.map((r) => ({ name: 'process-webhook-event', data: r, opts: { jobId: `webhook-${r.eventRowId}` } })));
    running.workers = await startWorkers({ queues: [QUEUES.webhooks], schedule: false, relay: false });
    await waitUntil(async () => (await db()('webhookEvents').where({ tenantId: tenant.id, status: 'processed' })).length === 30, 'all 30 events booked');
    expect(await writingTransactions(refs.map((r) => r.eventRowId))).toBeLessThanOrEqual(15);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(30);
    const jobs = () => Promise.all(refs.map((r) => getQueue(QUEUES.webhooks).getJob(`webhook-${r.eventRowId}`)));
    await waitUntil(async () => (await jobs()).every((j) => j?.finishedOn), 'all 30 jobs finished', 10_000);
    expect((await jobs()).map((j) => j!.returnvalue?.status)).toEqual(Array(30).fill('processed'));
  });

  it('the webhooks queue holds WEBHOOK_BATCH_MAX × WEBHOOK_BATCHES_IN_FLIGHT jobs per process unless its concurrency is set; 1 turns batches off', () => {
    expect(concurrencyFor(loadConfig({}), QUEUES.webhooks)).toBe(40);
    expect(concurrencyFor(loadConfig({ WEBHOOK_BATCH_MAX: '8' }), QUEUES.webhooks)).toBe(16);
    expect(concurrencyFor(loadConfig({ WEBHOOK_BATCH_MAX: '8', WEBHOOK_BATCHES_IN_FLIGHT: '1' }), QUEUES.webhooks)).toBe(8);
    expect(concurrencyFor(loadConfig({ WEBHOOK_BATCH_MAX: '8', WORKER_CONCURRENCY_WEBHOOKS: '3' }), QUEUES.webhooks)).toBe(3);
    expect(concurrencyFor(loadConfig({ WEBHOOK_BATCH_MAX: '1' }), QUEUES.webhooks)).toBe(5);
    expect(concurrencyFor(loadConfig({}), QUEUES.email)).toBe(5);
  });
});

/**
 * What a batch does once per batch instead of once per event (shared/commands/webhooks: the rows
 * locked by one statement, the payers' suppliers looked up by one, the final statuses written by
 * one, outcomes.ts): each event must still end exactly as it would alone, also where a later
 * event of the batch depends on what an earlier one did.
 */
describe('webhook event batches: statements shared by the batch', () => {
  it('a payment and its refund in one batch: the refund sees the payment booked, not pending, and is linked to it', async () => {
    const { tenant } = await createTeam();
    const payment = normalizedPayment();
    const refund = normalizedPayment({
      kind: 'refund',
      eventType: 'charge.refunded',
      externalId: `re_${suffix()}`,
      originalExternalId: payment.externalId,
      amount: '4.00',
    });
    const refs = [await storeNormalized(tenant.id, payment), await storeNormalized(tenant.id, refund)];
    const before = await batchMetric('committed');
    const outcomes = await Promise.all(batchAll(refs));
    expect(outcomes.map((o) => o.status)).toEqual(['processed', 'processed']);
    // Not rolled back and run one by one (a RetryLater would have done that): one transaction.
    expect(await writingTransactions(refs.map((r) => r.eventRowId))).toBe(1);
    expect(await batchMetric('committed')).toEqual({ count: before.count + 1, sum: before.sum + 2 });
    const refundInvoice = await db()('invoices').where({ id: outcomes[1].invoiceId }).first();
    expect(refundInvoice.relatedInvoiceId).toBe(outcomes[0].invoiceId);
    expect(refundInvoice.supplierId).toBe((await db()('invoices').where({ id: outcomes[0].invoiceId }).first()).supplierId);
  });

  it('two deliveries of one event that books nothing (a failed payment) in one batch: the first processed, the second duplicate', async () => {
    const { tenant } = await createTeam();
    const failed = normalizedPayment({ kind: 'failure', eventType: 'invoice.payment_failed' });
    const refs = [await storeNormalized(tenant.id, failed), await storeNormalized(tenant.id, failed)];
    const outcomes = await Promise.all(batchAll(refs));
    expect(outcomes.map((o) => o.status)).toEqual(['processed', 'duplicate']);
    expect(await writingTransactions(refs.map((r) => r.eventRowId))).toBe(1);
    const rows = await db()('webhookEvents')
      .whereIn(
        'id',
        refs.map((r) => r.eventRowId),
      )
      .orderBy('receivedAt');
    expect(rows.map((r) => r.status).sort()).toEqual(['duplicate', 'processed']);
    expect(rows.every((r) => r.processedAt)).toBe(true);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(0);
  });

  it('payers looked up for the whole batch match as each event alone would: by merchant id before e-mail, and a supplier created by an earlier event of the batch', async () => {
    const { tenant } = await createTeam();
    const byEmail = await createSupplier(tenant, { email: `known-${suffix()}@example.com` });
    const byMerchant = await createSupplier(tenant, { merchantIds: { stripe: `cus_known_${suffix()}` } });
    const newMerchant = `cus_new_${suffix()}`;
    const cp = (c: NormalizedEvent['counterparty']) => normalizedPayment({ counterparty: c });
    const events = [
      cp({ name: 'Bekannt per E-Mail', email: byEmail.email!.toUpperCase() }),
      cp({ name: 'Bekannt per Händler-Id', merchantId: byMerchant.merchantIds.stripe, email: byEmail.email }),
      // A new payer: created by this event …
      cp({ name: 'Neu GmbH', merchantId: newMerchant, email: `neu-${suffix()}@example.com` }),
      // … and matched by its merchant id in the next one, though its e-mail is the known supplier's.
      cp({ name: 'Neu GmbH', merchantId: newMerchant, email: byEmail.email }),
      cp({ name: 'Neu GmbH', merchantId: newMerchant }),
    ];
    const refs = [];
    for (const e of events) refs.push(await storeNormalized(tenant.id, e));
    const outcomes = await Promise.all(batchAll(refs));
    expect(outcomes.map((o) => o.status)).toEqual(Array(5).fill('processed'));
    expect(await writingTransactions(refs.map((r) => r.eventRowId))).toBe(1);
    const supplierOf = async (invoiceId: string | null | undefined) => (await db()('invoices').where({ id: invoiceId }).first()).supplierId as string;
    const suppliers = await Promise.all(outcomes.map((o) => supplierOf(o.invoiceId)));
    expect(suppliers[0]).toBe(byEmail.id);
    expect(suppliers[1]).toBe(byMerchant.id);
    expect(suppliers[2]).not.toBe(byEmail.id);
    expect(suppliers.slice(3)).toEqual([suppliers[2], suppliers[2]]);
    expect(await db()('suppliers').where({ tenantId: tenant.id })).toHaveLength(3);
    expect(outcomes.map((o) => o.result!.steps.find((st) => st.step === 'supplier')!.result)).toEqual(['matched', 'matched', 'created', 'matched', 'matched']);
  });

  it('events of two tenants in one batch: each booked on its own tenant’s payer', async () => {
    const [a, b] = [await createTeam(), await createTeam()];
    const merchantId = `cus_shared_${suffix()}`;
    const supplierA = await createSupplier(a.tenant, { merchantIds: { stripe: merchantId } });
    const events = [normalizedPayment({ counterparty: { merchantId, name: 'Geteilt' } }), normalizedPayment({ counterparty: { merchantId, name: 'Geteilt' } })];
    const refs = [await storeNormalized(a.tenant.id, events[0]), await storeNormalized(b.tenant.id, events[1])];
    const outcomes = await Promise.all(batchAll(refs));
    expect(outcomes.map((o) => o.status)).toEqual(['processed', 'processed']);
    expect(await writingTransactions(refs.map((r) => r.eventRowId))).toBe(1);
    const [invA, invB] = await Promise.all(outcomes.map((o) => db()('invoices').where({ id: o.invoiceId }).first()));
    expect([invA.tenantId, invA.supplierId]).toEqual([a.tenant.id, supplierA.id]);
    expect(invB.tenantId).toBe(b.tenant.id);
    expect((await db()('suppliers').where({ id: invB.supplierId }).first()).tenantId).toBe(b.tenant.id);
    const rows = await db()('webhookEvents').whereIn(
      'id',
      refs.map((r) => r.eventRowId),
    );
    expect(rows.map((r) => [r.tenantId, r.status, r.invoiceId]).sort()).toEqual(
      [
        [a.tenant.id, 'processed', invA.id],
        [b.tenant.id, 'processed', invB.id],
      ].sort(),
    );
  });
});

/** A verified event stored as ingest stores it (pending, no job), without an installation: settings {}. */
async function storeNormalized(tenantId: string, event: NormalizedEvent) {
  const [row] = await db()('webhookEvents')
    .insert({
      tenantId,
      provider: event.provider,
      event: event.eventType,
      status: 'pending',
      externalId: event.eventId,
      moneyExternalId: event.externalId ?? null,
      normalized: JSON.stringify(event),
    })
    .returning('id');
  return { eventRowId: row.id as string, tenantId };
}

/** webhook_batch_events for one outcome: batches observed and events in them. */
const batchMetric = (outcome: 'committed' | 'rolled_back') => histogramOf(webhookBatchEvents, outcome);

/** Hand all refs to one event batcher in the same turn, as a worker does with a burst of jobs. */
function batchAll<T = ProcessOutcome>(refs: { eventRowId: string; tenantId: string }[], map?: (p: Promise<ProcessOutcome>) => Promise<T>): Promise<T>[] {
  const batches = createEventBatches(20);
  return refs.map((r) => {
    const p = batches.run(r);
    return (map ? map(p) : p) as Promise<T>;
  });
}
