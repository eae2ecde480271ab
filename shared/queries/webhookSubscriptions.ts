import { notFound } from '../errors';
import type { Db } from '../db';

/** A webhook subscription as the API shows it: never its secret (shown once, at creation). */
export interface WebhookSubscriptionView {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  active: boolean;
  /** Since when every delivery has failed; null while deliveries succeed. */
  failingSince: string | null;
  disabledAt: string | null;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface DeliveryAttempt {
  attempt: number;
  at: string;
  ms: number;
  statusCode: number | null;
  error: string | null;
  /** The start of the receiver's answer (at most 1,000 characters of the 64 KB read). */
  responseBody: string | null;
}

export interface WebhookDeliveryView {
  id: string;
  subscriptionId: string;
  eventId: string;
  eventType: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: DeliveryAttempt[];
  attemptCount: number;
  lastStatusCode: number | null;
  lastError: string | null;
  redeliveryOf: string | null;
  deliveredAt: string | null;
  failedAt: string | null;
  createdAt: string;
}

const iso = (v: unknown): string | null => (v == null ? null : v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString());

const SUBSCRIPTION_COLUMNS = ['id', 'url', 'events', 'description', 'active', 'failingSince', 'disabledAt', 'disabledReason', 'createdAt', 'updatedAt'];

// biome-ignore lint/suspicious/noExplicitAny: a knex row
export function toSubscriptionView(r: any): WebhookSubscriptionView {
  return {
    id: r.id,
    url: r.url,
    events: r.events,
    description: r.description ?? null,
    active: r.active,
    failingSince: iso(r.failingSince),
    disabledAt: iso(r.disabledAt),
    disabledReason: r.disabledReason ?? null,
    createdAt: iso(r.createdAt)!,
    updatedAt: iso(r.updatedAt)!,
  };
}

export async function listWebhookSubscriptions(db: Db, tenantId: string): Promise<WebhookSubscriptionView[]> {
  const rows = await db('webhookSubscriptions')
    .where({ tenantId })
    .whereNull('deletedAt')
    .orderBy([{ column: 'createdAt' }, { column: 'id' }])
    .select(SUBSCRIPTION_COLUMNS);
  return rows.map(toSubscriptionView);
}

/** One subscription of the tenant; 404 when missing, deleted or another tenant's. */
export async function getWebhookSubscription(db: Db, tenantId: string, id: string): Promise<WebhookSubscriptionView> {
  const row = await db('webhookSubscriptions').where({ tenantId, id }).whereNull('deletedAt').first(SUBSCRIPTION_COLUMNS);
  if (!row) throw notFound('Webhook subscription');
  return toSubscriptionView(row);
}

// biome-ignore lint/suspicious/noExplicitAny: a knex row
function toDeliveryView(r: any): WebhookDeliveryView {
  return {
    id: r.id,
    subscriptionId: r.subscriptionId,
    eventId: r.eventId,
    eventType: r.eventType,
    status: r.status,
    attempts: r.attempts ?? [],
    attemptCount: r.attemptCount,
    lastStatusCode: r.lastStatusCode ?? null,
    lastError: r.lastError ?? null,
    redeliveryOf: r.redeliveryOf ?? null,
    deliveredAt: iso(r.deliveredAt),
    failedAt: iso(r.failedAt),
    createdAt: iso(r.createdAt)!,
  };
}

const deliveryColumns = [
  'd.id',
  'd.subscriptionId',
  'd.eventId',
  'e.type as eventType',
  'd.status',
  'd.attempts',
  'd.attemptCount',
  'd.lastStatusCode',
  'd.lastError',
  'd.redeliveryOf',
  'd.deliveredAt',
  'd.failedAt',
  'd.createdAt',
];

/** A subscription's deliveries, newest first (404 for another tenant's subscription). */
export async function listWebhookDeliveries(
  db: Db,
  tenantId: string,
  subscriptionId: string,
  page: { limit: number; status?: string },
): Promise<WebhookDeliveryView[]> {
  await getWebhookSubscription(db, tenantId, subscriptionId);
  const rows = await db('webhookDeliveries as d')
    .join('outboundEvents as e', 'e.id', 'd.eventId')
    .where({ 'd.tenantId': tenantId, 'd.subscriptionId': subscriptionId })
    .modify((q) => (page.status ? q.where('d.status', page.status) : q))
    .orderBy([
      { column: 'd.createdAt', order: 'desc' },
      { column: 'd.id', order: 'desc' },
    ])
    .limit(page.limit)
    .select(deliveryColumns);
  return rows.map(toDeliveryView);
}

export async function getWebhookDelivery(db: Db, tenantId: string, id: string): Promise<WebhookDeliveryView> {
  const row = await db('webhookDeliveries as d')
    .join('outboundEvents as e', 'e.id', 'd.eventId')
    .where({ 'd.tenantId': tenantId, 'd.id': id })
    .first(deliveryColumns);
  if (!row) throw notFound('Webhook delivery');
  return toDeliveryView(row);
}

/** What the delivery job needs: the delivery's state, its event, and its subscription's target and sealed secret. */
export interface DeliveryToSend {
  id: string;
  tenantId: string;
  status: 'pending' | 'delivered' | 'failed';
  attemptCount: number;
  createdAt: Date;
  event: { id: string; type: string; createdAt: string; object: unknown };
  subscription: { id: string; url: string; secretEnc: string; active: boolean; deleted: boolean };
}

export async function loadDeliveryToSend(db: Db, tenantId: string, id: string): Promise<DeliveryToSend | undefined> {
  const r = await db('webhookDeliveries as d')
    .join('outboundEvents as e', 'e.id', 'd.eventId')
    .join('webhookSubscriptions as s', 's.id', 'd.subscriptionId')
    .where({ 'd.tenantId': tenantId, 'd.id': id })
    .first(
      'd.id',
      'd.tenantId',
      'd.status',
      'd.attemptCount',
      'd.createdAt',
      'e.id as eventId',
      'e.type as eventType',
      'e.createdAt as eventCreatedAt',
      'e.object',
      's.id as subscriptionId',
      's.url',
      's.secretEnc',
      's.active',
      's.deletedAt',
    );
  if (!r) return undefined;
  return {
    id: r.id,
    tenantId: r.tenantId,
    status: r.status,
    attemptCount: r.attemptCount,
    createdAt: new Date(r.createdAt),
    event: { id: r.eventId, type: r.eventType, createdAt: iso(r.eventCreatedAt)!, object: r.object },
    subscription: { id: r.subscriptionId, url: r.url, secretEnc: r.secretEnc, active: r.active, deleted: r.deletedAt != null },
  };
}

/** The active subscriptions of a tenant that name an event type: whom an event fans out to. */
export async function subscribersOf(db: Db, tenantId: string, type: string): Promise<string[]> {
  const rows = await db('webhookSubscriptions').where({ tenantId, active: true }).whereNull('deletedAt').whereRaw('? = any(events)', [type]).select('id');
  return rows.map((r: { id: string }) => r.id);
}

/** A tenant's active subscriptions with the events each names (one read serves every event of a transaction). */
export async function activeSubscriptions(db: Db, tenantId: string): Promise<{ id: string; events: string[] }[]> {
  return db('webhookSubscriptions').where({ tenantId, active: true }).whereNull('deletedAt').orderBy('id').select('id', 'events');
}

/** The tenant's active admins' addresses (the disabled-subscription notice goes to them). */
export async function tenantAdminEmails(db: Db, tenantId: string): Promise<string[]> {
  const rows = await db('users').where({ tenantId, role: 'admin', active: true }).orderBy('email').select('email');
  return rows.map((r: { email: string }) => r.email);
}

/** A subscription whatever its state, with the last error of its deliveries (for the disabled notice). */
export async function getWebhookSubscriptionAnyState(
  db: Db,
  tenantId: string,
  id: string,
): Promise<{ id: string; url: string; lastError: string | null } | undefined> {
  const row = await db('webhookSubscriptions').where({ tenantId, id }).first('id', 'url');
  if (!row) return undefined;
  const last = await db('webhookDeliveries').where({ tenantId, subscriptionId: id }).whereNotNull('lastError').orderBy('updatedAt', 'desc').first('lastError');
  return { id: row.id, url: row.url, lastError: last?.lastError ?? null };
}
