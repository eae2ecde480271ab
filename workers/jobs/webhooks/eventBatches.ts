import { Batches } from '../../../shared/batches';
import { logger } from '../../../shared/logger';
import { webhookBatchEvents } from '../../../shared/metrics';
import { processStoredEvent, processStoredEventBatch, type ProcessOutcome, type StoredEventRef } from '../../../shared/webhooks/processStoredEvent';

/**
 * The webhook jobs a worker process is running, booked in batches (shared/batches.ts): up to
 * `maxSize` events in one transaction, `inFlight` batches at a time, each on its own connection.
 * Each event keeps its own BullMQ job; only the database work is shared. A batch that throws
 * committed nothing, and its events run again each in its own transaction. Why and the lock
 * timeout (BATCH_LOCK_TIMEOUT_MS): docs/webhooks.md, "Batches". maxSize 1: no batching.
 */
export function createEventBatches(maxSize: number, inFlight = 1): Batches<StoredEventRef, ProcessOutcome> {
  return new Batches({
    maxSize,
    maxInFlight: inFlight,
    runBatch: processStoredEventBatch,
    runOne: (ref) => processStoredEvent(ref.eventRowId, ref.tenantId),
    observe: (outcome, size, err) => {
      webhookBatchEvents.observe({ outcome }, size);
      if (err) logger.debug({ events: size, err: String(err) }, 'webhook batch rolled back; its events run one by one');
    },
  });
}
