import type { Knex } from 'knex';
import { systemActor } from '../../../shared/actor';
import { Batches } from '../../../shared/batches';
import { bookStoredEvents, type StoredEventOutcome } from '../../../shared/commands/webhooks/bookStoredEvent';
import type { CommandContext } from '../../../shared/commands/types';
import type { ProcessWebhookEventPayload } from '../../../shared/jobs/catalog';
import { logger } from '../../../shared/logger';
import { webhookBatchEvents } from '../../../shared/metrics';
import { runInTransaction } from '../../../shared/outbox';

/**
 * A batch waits at most this long for any one lock (a row lock; a money movement's, event's or
 * counterparty's advisory lock; another transaction's uncommitted invoice with the same external
 * id). Batches take locks in no common order and could deadlock; rather than wait for PostgreSQL's
 * deadlock check (1 s), a contended batch gives up at once and its events run one by one.
 */
export const BATCH_LOCK_TIMEOUT_MS = 100;

/** A webhook job acts for its event's tenant as the system. */
export const jobContext = (trx: Knex.Transaction, tenantId: string): CommandContext => ({ trx, actor: systemActor(tenantId) });

/** One stored event booked in its own transaction. */
export function bookEvent(ref: ProcessWebhookEventPayload): Promise<StoredEventOutcome> {
  return runInTransaction(async (trx) => (await bookStoredEvents(trx, [ref]))[0]);
}

/**
 * Several stored events in ONE transaction, each exactly as bookEvent books it. All or nothing:
 * if any throws, the batch rolls back and the caller runs each event alone. Two events of one
 * money movement are safe: advisory locks are re-entrant, and the second sees the first one's
 * invoice and ends duplicate (docs/webhooks.md, "Batches").
 */
export function bookEventBatch(refs: readonly ProcessWebhookEventPayload[]): Promise<StoredEventOutcome[]> {
  return runInTransaction(async (trx) => {
    await trx.raw(`set local lock_timeout = ${BATCH_LOCK_TIMEOUT_MS}`);
    return bookStoredEvents(trx, refs, { tryLocks: true });
  });
}

/**
 * The webhook jobs a worker process is running, booked in batches (shared/batches.ts): up to
 * `maxSize` events in one transaction, `inFlight` batches at a time, each on its own connection.
 * Each event keeps its own BullMQ job; only the database work is shared. A batch that throws
 * committed nothing, and its events run again each in its own transaction. An event whose money
 * lock another transaction holds is left out of its batch and booked alone after it. Why and the
 * lock timeout (BATCH_LOCK_TIMEOUT_MS): docs/webhooks.md, "Batches". maxSize 1: no batching.
 */
export function createEventBatches(maxSize: number, inFlight = 1): { run: (ref: ProcessWebhookEventPayload) => Promise<StoredEventOutcome> } {
  const batches = new Batches<ProcessWebhookEventPayload, StoredEventOutcome>({
    maxSize,
    maxInFlight: inFlight,
    runBatch: bookEventBatch,
    runOne: bookEvent,
    observe: (outcome, size, err) => {
      webhookBatchEvents.observe({ outcome }, size);
      if (err) logger.debug({ events: size, err: String(err) }, 'webhook batch rolled back; its events run one by one');
    },
  });
  return {
    // An event its batch left out (its money movement locked by another transaction, mostly the
    // same payment's event in the other batch in flight) is booked alone once that batch is over.
    run: async (ref) => {
      const outcome = await batches.run(ref);
      return outcome.status === 'deferred' ? bookEvent(ref) : outcome;
    },
  };
}
