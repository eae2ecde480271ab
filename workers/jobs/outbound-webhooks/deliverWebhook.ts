import { UnrecoverableError, type Job } from 'bullmq';
import { db } from '../../../shared/db';
import { runInTransaction } from '../../../shared/outbox';
import { config } from '../../../shared/config';
import { logger } from '../../../shared/logger';
import { nowMs } from '../../../shared/clock';
import { systemActor } from '../../../shared/actor';
import { decryptSecret } from '../../../shared/crypto/secretBox';
import type { DeliverWebhookPayload } from '../../../shared/jobs/catalog';
import type { CommandContext } from '../../../shared/commands/types';
import { RETRY_WINDOW_MS, serializeBody, signatureHeader } from '../../../shared/domain/outboundWebhooks';
import { guardedPost, TargetRefusedError } from '../../../shared/net/guardedRequest';
import { loadDeliveryToSend, type DeliveryAttempt } from '../../../shared/queries/webhookSubscriptions';
import { failUnsentDelivery, recordDeliveryFailure, recordDeliverySuccess } from '../../../shared/commands/outboundWebhooks/deliveries';

/** The receiver must answer within this (connect, send, answer and its body together). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** How much of the receiver's answer is read (the rest is not). */
export const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * Send one delivery of an outbound webhook (docs/outbound-webhooks.md): load, sign, POST under
 * the SSRF rules (shared/net/guardedRequest.ts), record the attempt. A 2xx delivers it; anything
 * else is retried by BullMQ (backoff: retryDelayMs) until the 3-day window ends, then the
 * delivery fails, and a subscription failing that long is disabled (recordDeliveryFailure). A
 * worker killed mid-request leaves the delivery pending: the job runs again and sends it again
 * (at least once; receivers deduplicate by the event id). No transaction is open during the POST.
 */
export async function deliverWebhookJob(job: Job<DeliverWebhookPayload>) {
  const { tenantId, deliveryId } = job.data;
  const actor = systemActor(tenantId);
  // runInTransaction: the disabled-subscription notice a failure may write to the outbox is sent right after commit.
  const run = <T>(command: (ctx: CommandContext) => Promise<T>) => runInTransaction((trx) => command({ trx, actor }));

  const d = await loadDeliveryToSend(db(), tenantId, deliveryId);
  if (!d) throw new UnrecoverableError(`Webhook delivery ${deliveryId} does not exist`);
  if (d.status !== 'pending') return { status: d.status, skipped: true };
  if (d.subscription.deleted || !d.subscription.active) {
    await run((ctx) => failUnsentDelivery(ctx, deliveryId, `not sent: the subscription is ${d.subscription.deleted ? 'deleted' : 'disabled'}`));
    return { status: 'failed', reason: 'subscription-inactive' };
  }

  const body = serializeBody({ id: d.event.id, type: d.event.type, createdAt: d.event.createdAt, tenantId, data: { object: d.event.object } });
  const t = Math.floor(nowMs() / 1000);
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Buchhaltung-Webhooks/1',
    'x-signature': signatureHeader(decryptSecret(d.subscription.secretEnc), body, t),
    'x-webhook-id': d.event.id,
    'x-webhook-event': d.event.type,
    'x-webhook-delivery': d.id,
  };
  const started = Date.now();
  const attempt: DeliveryAttempt = {
    attempt: d.attemptCount + 1,
    at: new Date(nowMs()).toISOString(),
    ms: 0,
    statusCode: null,
    error: null,
    responseBody: null,
  };
  let refused = false;
  try {
    const res = await guardedPost(
      d.subscription.url,
      { headers, body, timeoutMs: DELIVERY_TIMEOUT_MS, maxBodyBytes: MAX_RESPONSE_BYTES },
      { allowTargets: config().outboundWebhooks.allowTargets },
    );
    attempt.statusCode = res.statusCode;
    attempt.responseBody = res.bodyTruncated ? `(answer longer than ${MAX_RESPONSE_BYTES} bytes, not read)` : res.body.slice(0, 1000) || null;
    if (res.statusCode >= 300 && res.statusCode < 400)
      attempt.error = `redirect not followed${res.location ? ` (Location: ${res.location.slice(0, 300)})` : ''}`;
    else if (res.statusCode < 200 || res.statusCode >= 300) attempt.error = `HTTP ${res.statusCode}`;
  } catch (err) {
    refused = err instanceof TargetRefusedError;
    attempt.error = refused ? `target refused: ${(err as Error).message}` : `request failed: ${(err as Error).message}`;
  }
  attempt.ms = Date.now() - started;

  if (!attempt.error) {
    await run((ctx) => recordDeliverySuccess(ctx, deliveryId, attempt));
    return { status: 'delivered', statusCode: attempt.statusCode };
  }
  // Final: the window is over, the attempts are used up, or the target is refused (its address
  // is the subscription's, and retrying cannot make it public).
  const windowOver = nowMs() - d.createdAt.getTime() >= RETRY_WINDOW_MS;
  const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  const final = refused || windowOver || lastAttempt;
  const { disabled } = await run((ctx) => recordDeliveryFailure(ctx, deliveryId, attempt, final));
  if (final) {
    logger.warn({ deliveryId, error: attempt.error, disabled }, 'webhook delivery failed for good');
    return { status: 'failed', error: attempt.error, subscriptionDisabled: disabled };
  }
  throw new Error(`webhook delivery ${deliveryId} failed: ${attempt.error}`);
}
