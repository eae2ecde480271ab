import { UnrecoverableError, type Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createTeam } from '../helpers/factories';
import { createSupplier } from '../helpers/invoiceFactory';
import { bookEvent, normalizedPayment } from '../helpers/normalizedEvents';
import { workersPerTest } from '../helpers/webhookFactory';
import { db } from '../../shared/db';
import { runInTransaction } from '../../shared/outbox';
import { systemActor } from '../../shared/actor';
import { bookPaymentEvent } from '../../shared/commands/webhooks/bookPaymentEvent';
import type { NormalizedEvent } from '../../shared/providers/payments/types';
import { processWebhookEventJob } from '../../workers/jobs/webhooks/processWebhookEvent';
import { sweepStuckWebhookEventsJob } from '../../workers/jobs/maintenance/sweepStuckWebhookEvents';
import { startWorkers } from '../../workers/worker';

/**
 * A refund that overtakes its payment: it waits (RetryLater) while the payment's row is pending.
 * Found by an audit (2026-11-26): after its last attempt it was failed for good, so a refund whose
 * payment's job was late by more than the backoff (or lost, and rescued by the sweep) was never
 * booked — the provider had its 200 and does not redeliver.
 */
const running = workersPerTest();

/** A verified event stored as ingest stores it: pending, received `minutesAgo`. */
async function storePending(tenantId: string, event: NormalizedEvent, minutesAgo: number) {
  const [row] = await db()('webhookEvents')
    .insert({
      tenantId,
      provider: event.provider,
      event: event.eventType,
      status: 'pending',
      externalId: event.eventId,
      moneyExternalId: event.externalId,
      normalized: JSON.stringify(event),
      receivedAt: new Date(Date.now() - minutesAgo * 60_000),
    })
    .returning('id');
  return row.id as string;
}

async function waitForStatus(id: string, status: string) {
  for (const deadline = Date.now() + 60_000; ; ) {
    const row = await db()('webhookEvents').where({ id }).first();
    if (row.status === status) return row;
    if (Date.now() > deadline) throw new Error(`row ${id} is ${row.status}, expected ${status}: ${row.error}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const refundOf = (payment: NormalizedEvent, over: Partial<NormalizedEvent> = {}) =>
  normalizedPayment({
    provider: payment.provider,
    kind: 'refund',
    eventType: 'refund',
    externalId: `re_${randomUUID().slice(0, 8)}`,
    originalExternalId: payment.externalId,
    amount: '4.00',
    ...over,
  });

describe('a refund that overtakes its payment', () => {
  it('still waiting after its last attempt, it stays pending; the sweep runs it again and it is booked, linked', async () => {
    const { tenant } = await createTeam();
    // No connector row: the job books with default settings, the supplier made from the counterparty.
    const payment = normalizedPayment({ provider: 'bank', eventType: 'payment_completed', amount: '10.00' });
    const paymentRow = await storePending(tenant.id, payment, 30); // its job lost
    const refundRow = await storePending(tenant.id, refundOf(payment), 20);

    const lastAttempt = {
      id: `webhook-${refundRow}`,
      data: { eventRowId: refundRow, tenantId: tenant.id },
      attemptsMade: 7,
      opts: { attempts: 8 },
    } as unknown as Job;
    const err = await processWebhookEventJob(lastAttempt as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect((err as Error).message).toMatch(/still being processed.*left pending/);
    expect((await db()('webhookEvents').where({ id: refundRow }).first()).status).toBe('pending');

    await sweepStuckWebhookEventsJob({ data: { tenantId: tenant.id } } as unknown as Job);
    running.workers = await startWorkers({ queues: ['webhooks'], schedule: false });
    await waitForStatus(paymentRow, 'processed');
    const refund = await waitForStatus(refundRow, 'processed');
    const paid = await db()('invoices').where({ tenantId: tenant.id, externalId: payment.externalId }).first();
    expect(await db()('invoices').where({ id: refund.invoiceId }).first()).toMatchObject({ relatedInvoiceId: paid.id, totalGross: '-4.00' });
  });

  it('Mollie: a refund.created that carries its payment among its related movements books both at once, though the payment.paid delivery is still pending', async () => {
    const { tenant } = await createTeam();
    const supplier = await createSupplier(tenant, { name: 'Mollie Händler' });
    const payment = normalizedPayment({ provider: 'mollie', eventType: 'payment.paid', externalId: `tr_${randomUUID().slice(0, 8)}`, amount: '20.00' });
    await storePending(tenant.id, payment, 1); // the payment.paid delivery, its job not done yet
    const refund = refundOf(payment, { eventType: 'refund.created', related: [payment] });
    const refundRow = await storePending(tenant.id, refund, 0);
    const result = await runInTransaction((trx) =>
      bookPaymentEvent({ trx, actor: systemActor(tenant.id) }, { event: refund, settings: { defaultSupplierId: supplier.id }, eventRowId: refundRow }),
    );
    expect(result.status).toBe('processed');
    const invoices = await db()('invoices').where({ tenantId: tenant.id }).orderBy('totalGross', 'desc');
    expect(invoices.map((i) => i.totalGross)).toEqual(['20.00', '-4.00']);
    expect(invoices[1].relatedInvoiceId).toBe(invoices[0].id);
  });
});

describe('refunds and the ledger', () => {
  it('refunds beyond the payment are booked as documents but not posted (the expense would go below zero)', async () => {
    const { tenant } = await createTeam();
    const supplier = await createSupplier(tenant, { name: 'PSP' });
    const settings = { autoPost: true, defaultSupplierId: supplier.id };
    const payment = normalizedPayment({ amount: '10.00' });
    await bookEvent(tenant.id, payment, settings);
    const first = await bookEvent(tenant.id, refundOf(payment, { amount: '6.00' }), settings);
    expect(first.warning).toBeNull();
    const second = await bookEvent(tenant.id, refundOf(payment, { amount: '6.00' }), settings);
    expect(second.warning).toMatch(/would exceed its payment of 10\.00/);
    // The payment and the first refund posted; the second refund stands unposted.
    expect(await db()('journalEntries').where({ tenantId: tenant.id })).toHaveLength(2);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(3);
  });
});
