import { UnrecoverableError, type Job } from 'bullmq';
import { AppError } from '../../../shared/errors';
import { PayloadError } from '../../../shared/providers/payments/errors';
import { PermanentPipelineError, RetryLaterError } from '../../../shared/commands/webhooks/errors';
import { failStoredEvent } from '../../../shared/commands/webhooks/failStoredEvent';
import { config } from '../../../shared/config';
import { logger } from '../../../shared/logger';
import { runInTransaction } from '../../../shared/outbox';
import { createEventBatches, jobContext } from './eventBatches';
import type { ProcessWebhookEventPayload } from '../../../shared/jobs/catalog';

/**
 * The event's own data cannot be booked: amount 0.00, an impossible date, an unsupported currency
 * (PermanentPipelineError), a payload the adapter cannot map, or a value the database refuses as
 * such (SQLSTATE class 22, data exception: a number out of range, a date that does not exist).
 * Bad input from outside, not a failure of ours: the row ends failed with the reason, logged at
 * warn, and the job completes (its work — giving the event its final state — is done).
 */
export function isRefusedInput(err: unknown): boolean {
  if (err instanceof PermanentPipelineError || err instanceof PayloadError) return true;
  const code = (err as { code?: string })?.code;
  return typeof code === 'string' && code.startsWith('22');
}

/** Errors a retry cannot fix: bad data, refused by a constraint other than a race's unique index. */
export function isPermanent(err: unknown): boolean {
  if (isRefusedInput(err)) return true;
  if (err instanceof AppError) return err.status < 500;
  const code = (err as { code?: string })?.code;
  return typeof code === 'string' && /^2[23]/.test(code) && code !== '23505';
}

let batches: ReturnType<typeof createEventBatches> | undefined;
const eventBatches = () => (batches ??= createEventBatches(config().webhookBatchMax, config().webhookBatchesInFlight));

const failEvent = ({ eventRowId, tenantId }: ProcessWebhookEventPayload, reason: string) =>
  runInTransaction((trx) => failStoredEvent(jobContext(trx, tenantId), { eventRowId, reason }));

/**
 * Job "process-webhook-event": one stored, verified event booked (bookStoredEvents), batched with
 * the process's other webhook jobs (./eventBatches.ts). The log row is the state; a finished row
 * is skipped. Transient errors throw for a retry; permanent ones and the last attempt fail the row.
 * Refused input (isRefusedInput) fails the row but completes the job with a warn, keeping "job
 * failed" (workers/worker.ts) for failures of ours.
 */
export async function processWebhookEventJob(job: Job<ProcessWebhookEventPayload>) {
  const { eventRowId, tenantId } = job.data;
  try {
    const { result: _r, ...summary } = await eventBatches().run({ eventRowId, tenantId });
    return summary;
  } catch (err) {
    const message = (err as Error)?.message ?? String(err);
    if (isRefusedInput(err)) {
      await failEvent(job.data, message);
      logger.warn({ eventRowId, reason: message }, 'webhook event refused: its data cannot be booked');
      return { status: 'failed' as const, reason: message };
    }
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (lastAttempt && err instanceof RetryLaterError) {
      // A refund still waiting for its payment after every attempt (a backlog, or the payment's
      // job was lost) is not given up: the provider got its 200 and will not redeliver. The row
      // stays pending, and the maintenance sweep runs the job again once the payment had time
      // (shared/webhooks/sweepStuckEvents.ts; past 24 h it fails the row).
      throw new UnrecoverableError(`${message}; left pending for the maintenance sweep`);
    }
    if (isPermanent(err) || lastAttempt) {
      await failEvent(job.data, message);
      throw new UnrecoverableError(message);
    }
    throw err;
  }
}
