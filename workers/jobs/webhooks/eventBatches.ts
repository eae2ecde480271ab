import { logger } from '../../../shared/logger';
import { webhookBatchEvents } from '../../../shared/metrics';
import {
  processStoredEvent,
  processStoredEventBatch,
  type ProcessOutcome,
  type StoredEventRef,
} from '../../../shared/webhooks/processStoredEvent';

interface Waiting extends StoredEventRef {
  resolve: (outcome: ProcessOutcome) => void;
  reject: (err: unknown) => void;
}

/**
 * The webhook jobs a worker process is running, booked in batches: up to `maxSize` events in one
 * transaction, one batch at a time. Each event keeps its own BullMQ job (its id, retries, Bull
 * Board row); only the database work is shared. A transaction per event costs BEGIN and COMMIT
 * round trips and a WAL flush, and its job's fixed costs ran beside the others'; in a batch they
 * are paid once per batch (docs/webhooks.md, "Batches").
 *
 * No waiting for a batch to fill: the first job starts a batch at once with whatever arrived in
 * the same turn of the event loop; jobs arriving while it runs form the next. Under load batches
 * fill up, at a trickle each event goes alone, as before.
 *
 * Failure isolation: a batch that throws (one bad event, a lock it may not wait for, a lost
 * connection) committed nothing; its events then run each in its own transaction, side by side,
 * and each job settles with its own event's outcome or error, so the job's retry and failure
 * handling see exactly what they saw without batches. The process never holds more events than
 * its webhook jobs (the queue's concurrency), batched or not.
 */
export class EventBatches {
  private readonly waiting: Waiting[] = [];
  private draining = false;

  constructor(private readonly maxSize: number) {}

  process(ref: StoredEventRef): Promise<ProcessOutcome> {
    // Batches off (WEBHOOK_BATCH_MAX=1): each event in its own transaction, side by side.
    if (this.maxSize <= 1) return processStoredEvent(ref.eventRowId, ref.tenantId);
    return new Promise((resolve, reject) => {
      this.waiting.push({ ...ref, resolve, reject });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.waiting.length) {
        // Jobs handed over in this same turn join the batch.
        await new Promise((resolve) => setImmediate(resolve));
        await this.run(this.waiting.splice(0, this.maxSize));
      }
    } finally {
      this.draining = false;
    }
  }

  private async run(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) return this.alone(batch[0]);
    let outcomes: ProcessOutcome[];
    try {
      outcomes = await processStoredEventBatch(batch);
    } catch (err) {
      webhookBatchEvents.observe({ outcome: 'rolled_back' }, batch.length);
      logger.debug({ events: batch.length, err: String(err) }, 'webhook batch rolled back; its events run one by one');
      // Side by side and not awaited, as jobs ran before batches: an event waiting for a lock
      // (the reason a batch gives up) holds up neither its batch-mates nor the next batch.
      for (const w of batch) void this.alone(w);
      return;
    }
    webhookBatchEvents.observe({ outcome: 'committed' }, batch.length);
    batch.forEach((w, i) => w.resolve(outcomes[i]));
  }

  private alone(w: Waiting): Promise<void> {
    return processStoredEvent(w.eventRowId, w.tenantId).then(w.resolve, w.reject);
  }
}
