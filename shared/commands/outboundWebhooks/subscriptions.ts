import { audit } from '../../audit';
import { config } from '../../config';
import { encryptSecret, randomToken } from '../../crypto/secretBox';
import { isWebhookEventType, PING_EVENT, WEBHOOK_EVENT_TYPES } from '../../domain/outboundWebhooks';
import { invalidInput, notFound, type ErrorDetail } from '../../errors';
import { refusedUrlReason } from '../../net/guardedRequest';
import { getWebhookDelivery, toSubscriptionView, type WebhookDeliveryView, type WebhookSubscriptionView } from '../../queries/webhookSubscriptions';
import type { CommandContext } from '../types';
import { writeDeliveries, writeEvent } from './emitEvent';

/** Subscriptions per tenant: each event is one delivery per subscription. */
export const MAX_SUBSCRIPTIONS = 25;

export interface SubscriptionInput {
  url?: string;
  events?: string[];
  description?: string | null;
  active?: boolean;
}

/**
 * What the URL alone shows is refused here (400): not https, credentials in it, a literal
 * non-public address, localhost. A name that resolves to such an address is refused at each
 * delivery, after DNS (shared/net/guardedRequest.ts), since DNS may change after creation.
 */
function check(input: SubscriptionInput, creating: boolean): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  if (input.url !== undefined || creating) {
    const reason = input.url ? refusedUrlReason(input.url, { allowTargets: config().outboundWebhooks.allowTargets }) : 'is required';
    if (reason) details.push({ field: 'url', message: reason });
  }
  if (input.events !== undefined || creating) {
    const events = input.events ?? [];
    if (!events.length) details.push({ field: 'events', message: 'must name at least one event' });
    for (const e of events) {
      if (!isWebhookEventType(e)) details.push({ field: 'events', message: `unknown event "${e}"; known: ${WEBHOOK_EVENT_TYPES.join(', ')}` });
    }
  }
  return details;
}

/** POST /api/webhook-subscriptions: the secret is in the answer once; stored encrypted (every delivery is signed with it). */
export async function createWebhookSubscription(
  { trx, actor }: CommandContext,
  input: SubscriptionInput,
): Promise<WebhookSubscriptionView & { secret: string }> {
  const details = check(input, true);
  if (details.length) throw invalidInput('Webhook subscription failed validation', details);
  const [{ count }] = await trx('webhookSubscriptions').where({ tenantId: actor.tenantId }).whereNull('deletedAt').count<{ count: string }[]>({ count: '*' });
  if (Number(count) >= MAX_SUBSCRIPTIONS) {
    throw invalidInput(`A tenant may have at most ${MAX_SUBSCRIPTIONS} webhook subscriptions`, [{ field: 'url', message: 'too many subscriptions' }]);
  }
  const secret = `whsec_${randomToken(32)}`;
  const [row] = await trx('webhookSubscriptions')
    .insert({
      tenantId: actor.tenantId,
      url: input.url,
      events: [...new Set(input.events)],
      description: input.description ?? null,
      secretEnc: encryptSecret(secret),
      createdBy: actor.userId,
    })
    .returning('*');
  await audit(trx, actor, {
    action: 'webhook_subscription.created',
    entityType: 'webhook_subscription',
    entityId: row.id,
    data: { url: row.url, events: row.events },
  });
  return { ...toSubscriptionView(row), secret };
}

async function lockSubscription({ trx, actor }: CommandContext, id: string) {
  const row = await trx('webhookSubscriptions').where({ tenantId: actor.tenantId, id }).whereNull('deletedAt').forUpdate().first();
  if (!row) throw notFound('Webhook subscription');
  return row;
}

/** PUT: url, events, description, active. Enabling a disabled subscription clears its failure state. */
export async function updateWebhookSubscription(ctx: CommandContext, id: string, input: SubscriptionInput): Promise<WebhookSubscriptionView> {
  const { trx, actor } = ctx;
  const details = check(input, false);
  if (details.length) throw invalidInput('Webhook subscription failed validation', details);
  const existing = await lockSubscription(ctx, id);
  const patch: Record<string, unknown> = { updatedAt: trx.fn.now() };
  if (input.url !== undefined) patch.url = input.url;
  if (input.events !== undefined) patch.events = [...new Set(input.events)];
  if (input.description !== undefined) patch.description = input.description;
  if (input.active !== undefined) {
    patch.active = input.active;
    if (input.active && !existing.active) Object.assign(patch, { disabledAt: null, disabledReason: null, failingSince: null });
    if (!input.active && existing.active) Object.assign(patch, { disabledAt: trx.fn.now(), disabledReason: 'disabled by an admin' });
  }
  const [row] = await trx('webhookSubscriptions').where({ tenantId: actor.tenantId, id }).update(patch).returning('*');
  await audit(trx, actor, { action: 'webhook_subscription.updated', entityType: 'webhook_subscription', entityId: id, data: { fields: Object.keys(input) } });
  return toSubscriptionView(row);
}

/** DELETE: soft, so its deliveries stay readable in the audit trail; pending ones end failed at their next attempt. */
export async function deleteWebhookSubscription(ctx: CommandContext, id: string): Promise<void> {
  const { trx, actor } = ctx;
  await lockSubscription(ctx, id);
  await trx('webhookSubscriptions').where({ tenantId: actor.tenantId, id }).update({ deletedAt: trx.fn.now(), active: false, updatedAt: trx.fn.now() });
  await audit(trx, actor, { action: 'webhook_subscription.deleted', entityType: 'webhook_subscription', entityId: id });
}

const notActive = () =>
  invalidInput('The subscription is disabled; enable it first (PUT with "active": true)', [{ field: 'id', message: 'subscription is not active' }]);

/** POST …/test: a `ping` event to this subscription alone, whose object is the subscription. */
export async function pingWebhookSubscription(ctx: CommandContext, id: string): Promise<WebhookDeliveryView> {
  const row = await lockSubscription(ctx, id);
  if (!row.active) throw notActive();
  const { deliveryIds } = await writeEvent(ctx.trx, ctx.actor.tenantId, PING_EVENT, toSubscriptionView(row), [id]);
  return getWebhookDelivery(ctx.trx, ctx.actor.tenantId, deliveryIds[0]);
}

/** POST …/deliveries/:deliveryId/redeliver: the same event (same id and body) once more, as a new delivery with attempts of its own. */
export async function redeliverWebhook(ctx: CommandContext, subscriptionId: string, deliveryId: string): Promise<WebhookDeliveryView> {
  const { trx, actor } = ctx;
  const row = await lockSubscription(ctx, subscriptionId);
  if (!row.active) throw notActive();
  const original = await trx('webhookDeliveries').where({ tenantId: actor.tenantId, subscriptionId, id: deliveryId }).first('id', 'eventId');
  if (!original) throw notFound('Webhook delivery');
  const [newId] = await writeDeliveries(trx, actor.tenantId, original.eventId, [subscriptionId], original.id);
  await audit(trx, actor, {
    action: 'webhook_delivery.redelivered',
    entityType: 'webhook_subscription',
    entityId: subscriptionId,
    data: { deliveryId, newDeliveryId: newId },
  });
  return getWebhookDelivery(trx, actor.tenantId, newId);
}
