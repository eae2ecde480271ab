import { UnrecoverableError, type Job } from 'bullmq';
import { AppError } from '../../../shared/errors';
import { PayloadError } from '../../../shared/providers/payments/errors';
import { PermanentPipelineError } from '../../../shared/commands/webhooks/createIncomingInvoiceFromEvent';
import { config } from '../../../shared/config';
import { markEventFailed } from '../../../shared/webhooks/processStoredEvent';
import { RetryLaterError } from '../../../shared/webhooks/pipeline';
import { createEventBatches } from './eventBatches';

export interface ProcessWebhookEventData {
  eventRowId: string;
  tenantId: string;
}

/** Errors a retry cannot fix: bad data, refused by a constraint other than a race's unique index. */
export function isPermanent(err: unknown): boolean {
  if (err instanceof PermanentPipelineError || err instanceof PayloadError) return true;
  if (err instanceof AppError) return err.status < 500;
  const code = (err as { code?: string })?.code;
  return typeof code === 'string' && /^2[23]/.test(code) && code !== '23505';
}

let batches: ReturnType<typeof createEventBatches> | undefined;
const eventBatches = () => (batches ??= createEventBatches(config().webhookBatchMax, config().webhookBatchesInFlight));

/**
 * Job "process-webhook-event" (queue webhooks, jobId webhook-<eventRowId>): runs one stored,
 * verified event through the pipeline (shared/webhooks), batched with the process's other
 * webhook jobs unless WEBHOOK_BATCH_MAX is 1 (./eventBatches.ts). Idempotent: the log row is the state;
 * a finished row is skipped. Transient errors (database, deadlock, a lost connection) throw and
 * BullMQ retries with exponential backoff and jitter; permanent ones, and the last attempt, end
 * the log row as failed with the reason.
 */
export async function processWebhookEventJob(job: Job<ProcessWebhookEventData>) {
  const { eventRowId, tenantId } = job.data;
  try {
    const { result: _r, ...summary } = await eventBatches().run({ eventRowId, tenantId });
    return summary;
  } catch (err) {
    const message = (err as Error)?.message ?? String(err);
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (lastAttempt && err instanceof RetryLaterError) {
      // A refund still waiting for its payment after every attempt (a backlog, or the payment's
      // job was lost) is not given up: the provider got its 200 and will not redeliver. The row
      // stays pending, and the maintenance sweep runs the job again once the payment had time
      // (shared/webhooks/sweepStuckEvents.ts; past 24 h it fails the row).
      throw new UnrecoverableError(`${message}; left pending for the maintenance sweep`);
    }
    if (isPermanent(err) || lastAttempt) {
      await markEventFailed(eventRowId, tenantId, message);
      throw new UnrecoverableError(message);
    }
    throw err;
  }
}
