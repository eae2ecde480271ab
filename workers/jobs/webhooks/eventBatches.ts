import { Batches } from '../../../shared/batches';
import { logger } from '../../../shared/logger';
import { webhookBatchEvents } from '../../../shared/metrics';
import {
  processStoredEvent,
  processStoredEventBatch,
  type ProcessOutcome,
  type StoredEventRef,
} from '../../../shared/webhooks/processStoredEvent';

/**
 * The webhook jobs a worker process is running, booked in batches (shared/batches.ts): up to
 * `maxSize` events in one transaction, one batch at a time. Each event keeps its own BullMQ job
 * (its id, retries, Bull Board row); only the database work is shared. A transaction per event
 * costs BEGIN and COMMIT round trips and a WAL flush, and its job's fixed costs ran beside the
 * others'; in a batch they are paid once per batch (docs/webhooks.md, "Batches").
 *
 * A batch that throws (one bad event, a lock it may not wait for, a lost connection) committed
 * nothing; its events then run each in its own transaction, side by side, so each job's retry and
 * failure handling see exactly what they saw without batches. The process never holds more
 * events than its webhook jobs (the queue's concurrency), batched or not. maxSize 1
 * (WEBHOOK_BATCH_MAX=1): one transaction per event.
 */
export function createEventBatches(maxSize: number): Batches<StoredEventRef, ProcessOutcome> {
  return new Batches({
    maxSize,
    runBatch: processStoredEventBatch,
    runOne: (ref) => processStoredEvent(ref.eventRowId, ref.tenantId),
    observe: (outcome, size, err) => {
      webhookBatchEvents.observe({ outcome }, size);
      if (err) logger.debug({ events: size, err: String(err) }, 'webhook batch rolled back; its events run one by one');
    },
  });
}
