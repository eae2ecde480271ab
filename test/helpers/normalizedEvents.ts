import { randomUUID } from 'node:crypto';
import { runInTransaction } from '../../shared/outbox';
import type { ConnectorSettings } from '../../shared/domain/connectorSettings';
import { systemActor } from '../../shared/actor';
import { bookPaymentEvent, type BookingResult } from '../../shared/commands/webhooks/bookPaymentEvent';
import type { NormalizedEvent } from '../../shared/providers/payments/types';

/**
 * A verified payment event as the adapters hand it to the pipeline (a Stripe payment of 10.00 EUR
 * on 2026-11-12 with fresh ids unless overridden), for tests that book movements without HTTP.
 */
export function normalizedPayment(over: Partial<NormalizedEvent> = {}): NormalizedEvent {
  const id = randomUUID().slice(0, 8);
  return {
    provider: 'stripe',
    eventId: `evt_${id}`,
    eventType: 'invoice.payment_succeeded',
    kind: 'payment',
    externalId: `in_${id}`,
    amount: '10.00',
    currency: 'EUR',
    date: '2026-11-12',
    occurredAt: '2026-11-12T10:00:00Z',
    counterparty: { name: 'Provider supplier' },
    ...over,
  };
}

/** Books an event as the worker's job does (bookPaymentEvent) and commits. */
export const bookEvent = (tenantId: string, event: NormalizedEvent, settings: ConnectorSettings): Promise<BookingResult> =>
  runInTransaction((trx) => bookPaymentEvent({ trx, actor: systemActor(tenantId) }, { event, settings }));
