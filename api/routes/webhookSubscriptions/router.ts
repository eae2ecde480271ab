import { createRouter } from '../../routing';
import { runInTransaction } from '../../../shared/outbox';
import { db } from '../../../shared/db';
import {
  createWebhookSubscription,
  deleteWebhookSubscription,
  pingWebhookSubscription,
  redeliverWebhook,
  updateWebhookSubscription,
  type SubscriptionInput,
} from '../../../shared/commands/outboundWebhooks/subscriptions';
import { getWebhookSubscription, listWebhookDeliveries, listWebhookSubscriptions } from '../../../shared/queries/webhookSubscriptions';
import {
  createdSubscriptionView,
  createSubscriptionBody,
  deliveriesQuery,
  deliveryView,
  errorResponses,
  subscriptionView,
  updateSubscriptionBody,
} from './schemas';

/**
 * Outbound webhooks: event subscriptions of a tenant and their deliveries
 * (docs/outbound-webhooks.md). Admins only: a subscription sends the tenant's data elsewhere.
 */
export const { router: webhookSubscriptionsRouter, add } = createRouter('/api/webhook-subscriptions', 'Webhook subscriptions');

add<SubscriptionInput>({
  method: 'post',
  path: '/',
  auth: 'admin',
  summary: 'Subscribe a receiver URL to events; the signing secret is in this answer only',
  description:
    'Each event is POSTed to the URL as JSON `{ id, type, createdAt, tenantId, data: { object } }`, signed ' +
    '`X-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">` with the secret, at least once, retried for up to 3 days. ' +
    'The URL must be https on a public address (no credentials; checked again after DNS at each delivery). docs/outbound-webhooks.md.',
  body: createSubscriptionBody,
  responses: { 201: { description: 'Created subscription with its secret', schema: createdSubscriptionView }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.status = 201;
    ctx.body = await runInTransaction((trx) => createWebhookSubscription({ trx, actor }, ctx.input.body));
  },
});

add({
  method: 'get',
  path: '/',
  auth: 'admin',
  summary: 'List webhook subscriptions (without secrets)',
  responses: { 200: { description: 'Subscriptions, oldest first', schema: { type: 'array', items: subscriptionView } }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await listWebhookSubscriptions(db(), ctx.state.actor.tenantId);
  },
});

add({
  method: 'get',
  path: '/:id',
  auth: 'admin',
  summary: 'One webhook subscription (without its secret)',
  responses: { 200: { description: 'Subscription', schema: subscriptionView }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await getWebhookSubscription(db(), ctx.state.actor.tenantId, ctx.input.params.id);
  },
});

add<SubscriptionInput>({
  method: 'put',
  path: '/:id',
  auth: 'admin',
  summary: 'Change url, events, description or active (true enables a disabled subscription again)',
  body: updateSubscriptionBody,
  responses: { 200: { description: 'Updated subscription', schema: subscriptionView }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => updateWebhookSubscription({ trx, actor }, ctx.input.params.id, ctx.input.body));
  },
});

add({
  method: 'delete',
  path: '/:id',
  auth: 'admin',
  summary: 'Delete a webhook subscription (pending deliveries end failed)',
  responses: { 204: { description: 'Deleted' }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    await runInTransaction((trx) => deleteWebhookSubscription({ trx, actor }, ctx.input.params.id));
    ctx.status = 204;
  },
});

add<unknown, { limit: number; status?: string }>({
  method: 'get',
  path: '/:id/deliveries',
  auth: 'admin',
  summary: "A subscription's deliveries, newest first, with every attempt's status code and timing",
  query: deliveriesQuery,
  responses: { 200: { description: 'Deliveries', schema: { type: 'array', items: deliveryView } }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await listWebhookDeliveries(db(), ctx.state.actor.tenantId, ctx.input.params.id, ctx.input.query);
  },
});

add({
  method: 'post',
  path: '/:id/deliveries/:deliveryId/redeliver',
  auth: 'admin',
  summary: 'Send a delivery’s event again (same event id and body) as a new delivery',
  description: 'Any delivery, delivered or failed; 400 while the subscription is disabled.',
  responses: { 202: { description: 'The new delivery, pending', schema: deliveryView }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.status = 202;
    ctx.body = await runInTransaction((trx) => redeliverWebhook({ trx, actor }, ctx.input.params.id, ctx.input.params.deliveryId));
  },
});

add({
  method: 'post',
  path: '/:id/test',
  auth: 'admin',
  summary: 'Send a `ping` event (its object is the subscription) to this subscription',
  description: 'Signed and retried like any event; 400 while the subscription is disabled.',
  responses: { 202: { description: 'The ping delivery, pending', schema: deliveryView }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.status = 202;
    ctx.body = await runInTransaction((trx) => pingWebhookSubscription({ trx, actor }, ctx.input.params.id));
  },
});
