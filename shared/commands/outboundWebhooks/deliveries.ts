import { now } from '../../clock';
import { RETRY_WINDOW_MS } from '../../domain/outboundWebhooks';
import { jobs } from '../../jobs/catalog';
import { enqueueAfterCommit } from '../../outbox';
import type { DeliveryAttempt } from '../../queries/webhookSubscriptions';
import { storable } from '../../storable';
import type { CommandContext } from '../types';

/**
 * A delivery's states (docs/outbound-webhooks.md), each arrow one command here:
 *   pending ──recordDeliverySuccess──▶ delivered
 *   pending ──recordDeliveryFailure──▶ pending (a retry follows) | failed (window over, or target refused)
 *   pending ──failUnsentDelivery──▶ failed (its subscription was disabled or deleted meanwhile)
 * Every transition leaves pending only, so a second run of the job (a killed worker's job runs
 * again) never undoes a final state. A delivery may still be sent twice: at least once.
 */

/** Attempts kept per delivery (the oldest are dropped): about 15 come in the 3-day window. */
const MAX_ATTEMPTS_KEPT = 50;

async function lockPending({ trx, actor }: CommandContext, deliveryId: string) {
  return trx('webhookDeliveries')
    .where({ tenantId: actor.tenantId, id: deliveryId, status: 'pending' })
    .forUpdate()
    .first('id', 'subscriptionId', 'attempts', 'attemptCount');
}

const withAttempt = (attempts: DeliveryAttempt[], a: DeliveryAttempt) =>
  JSON.stringify(
    [...attempts, { ...a, error: a.error && storable(a.error), responseBody: a.responseBody && storable(a.responseBody) }].slice(-MAX_ATTEMPTS_KEPT),
  );

/** pending → delivered; the subscription is no longer failing. */
export async function recordDeliverySuccess(ctx: CommandContext, deliveryId: string, attempt: DeliveryAttempt): Promise<boolean> {
  const { trx, actor } = ctx;
  const row = await lockPending(ctx, deliveryId);
  if (!row) return false;
  await trx('webhookDeliveries')
    .where({ id: deliveryId })
    .update({
      status: 'delivered',
      deliveredAt: trx.fn.now(),
      attempts: withAttempt(row.attempts, attempt),
      attemptCount: row.attemptCount + 1,
      lastStatusCode: attempt.statusCode,
      lastError: null,
      updatedAt: trx.fn.now(),
    });
  await trx('webhookSubscriptions').where({ tenantId: actor.tenantId, id: row.subscriptionId }).whereNotNull('failingSince').update({ failingSince: null });
  return true;
}

/**
 * A failed attempt. Not final: the delivery stays pending for the job's retry. Final: failed;
 * and when every delivery of its subscription has failed for the whole retry window (on the
 * service clock), the subscription is disabled and its tenant's admins are e-mailed (through the
 * outbox, so the notice is as durable as the disabling).
 */
export async function recordDeliveryFailure(
  ctx: CommandContext,
  deliveryId: string,
  attempt: DeliveryAttempt,
  final: boolean,
): Promise<{ recorded: boolean; disabled: boolean }> {
  const { trx, actor } = ctx;
  const row = await lockPending(ctx, deliveryId);
  if (!row) return { recorded: false, disabled: false };
  const at = now();
  await trx('webhookDeliveries')
    .where({ id: deliveryId })
    .update({
      attempts: withAttempt(row.attempts, attempt),
      attemptCount: row.attemptCount + 1,
      lastStatusCode: attempt.statusCode,
      lastError: attempt.error && storable(attempt.error),
      ...(final ? { status: 'failed', failedAt: trx.fn.now() } : {}),
      updatedAt: trx.fn.now(),
    });
  const [sub] = await trx('webhookSubscriptions')
    .where({ tenantId: actor.tenantId, id: row.subscriptionId })
    .update({ failingSince: trx.raw('coalesce(failing_since, ?)', [at]) })
    .returning(['id', 'active', 'failingSince']);
  const failingFor = at.getTime() - new Date(sub.failingSince).getTime();
  if (!final || !sub.active || failingFor < RETRY_WINDOW_MS) return { recorded: true, disabled: false };
  await trx('webhookSubscriptions')
    .where({ tenantId: actor.tenantId, id: sub.id })
    .update({ active: false, disabledAt: at, disabledReason: 'every delivery failed for 3 days', updatedAt: trx.fn.now() });
  await enqueueAfterCommit(trx, jobs.notifyWebhookDisabled, { tenantId: actor.tenantId, subscriptionId: sub.id, disabledAt: at.getTime() });
  return { recorded: true, disabled: true };
}

/** pending → failed without an attempt: the subscription was disabled or deleted after the event. */
export async function failUnsentDelivery(ctx: CommandContext, deliveryId: string, reason: string): Promise<void> {
  const { trx, actor } = ctx;
  await trx('webhookDeliveries')
    .where({ tenantId: actor.tenantId, id: deliveryId, status: 'pending' })
    .update({ status: 'failed', failedAt: trx.fn.now(), lastError: reason, updatedAt: trx.fn.now() });
}
