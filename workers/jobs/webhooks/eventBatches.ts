import { Batches } from '../../../shared/batches';
import { logger } from '../../../shared/logger';
import { webhookBatchEvents } from '../../../shared/metrics';
import { processStoredEvent, processStoredEventBatch, type ProcessOutcome, type StoredEventRef } from '../../../shared/webhooks/processStoredEvent';

/**
 * The webhook jobs a worker process is running, booked in batches (shared/batches.ts): up to
 * `maxSize` events in one transaction, `inFlight` batches at a time, each on its own connection.
 * Each event keeps its own BullMQ job (its id, retries, Bull Board row); only the database work is
 * shared. A transaction per event costs BEGIN and COMMIT round trips and a WAL flush, and its job's
 * fixed costs ran beside the others'; in a batch they are paid once per batch (docs/webhooks.md,
 * "Batches"). A batch spends most of its time waiting for answers, one statement after the other;
 * a second batch in flight uses that time (docs/benchmarks.md: 30–50 % more events processed).
 *
 * A batch that throws (one bad event, a lock it may not wait for, a lost connection) committed
 * nothing; its events then run each in its own transaction, side by side, so each job's retry and
 * failure handling see exactly what they saw without batches. Two batches in flight may want the
 * same lock (two events of one payment) and wait for each other at most BATCH_LOCK_TIMEOUT_MS, as
 * batches of two worker processes do. The process never holds more events than its webhook jobs
 * (the queue's concurrency), batched or not. maxSize 1 (WEBHOOK_BATCH_MAX=1): one transaction per
 * event.
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
