import { createHmac } from 'node:crypto';

/**
 * Outbound webhooks (docs/outbound-webhooks.md): the events a subscription may name, the body a
 * receiver gets and its signature. Pure: the commands write events, the worker sends them.
 */
export const WEBHOOK_EVENT_TYPES = [
  'invoice.created',
  'invoice.finalized',
  'invoice.paid',
  'invoice.partially_paid',
  'invoice.cancelled',
  'invoice.deleted',
  'payment.recorded',
  'customer.created',
  'customer.updated',
  'customer.deleted',
  'incoming_invoice.created',
  'report.submission.updated',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Sent by POST …/test only; no subscription names it. */
export const PING_EVENT = 'ping';

export const isWebhookEventType = (s: string): s is WebhookEventType => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(s);

/** What a receiver gets: the event's id (stable across retries and redeliveries, for deduplication), type, time, tenant and resource. */
export interface WebhookBody {
  id: string;
  type: string;
  createdAt: string;
  tenantId: string;
  data: { object: unknown };
}

/** The body as sent: this exact string is signed, so it is built once per attempt and sent unchanged. */
export const serializeBody = (body: WebhookBody): string => JSON.stringify(body);

/**
 * `X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` with the subscription's
 * secret (Stripe's scheme): the timestamp is signed with the body, so a receiver that refuses old
 * timestamps also refuses a replayed request.
 */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}

/** Retries stop this long after the event (then the delivery is failed), and a subscription failing this long is disabled. */
export const RETRY_WINDOW_MS = 3 * 24 * 3600 * 1000;

/** No wait between two attempts is longer than this, so a receiver back after a day's outage is retried within hours. */
export const MAX_RETRY_DELAY_MS = 12 * 3600 * 1000;

/** BullMQ's backoff type of the delivery job (workers/worker.ts hands it to retryDelayMs). */
export const WEBHOOK_BACKOFF_TYPE = 'outbound-webhook';

/**
 * The wait before the next attempt: exponential from `baseMs` (1, 2, 4 … × base) capped at
 * MAX_RETRY_DELAY_MS, with jitter (each wait drawn from its upper half, so receivers that come
 * back are not hit by every sender at once), and never past the retry window: the last attempt
 * falls on its end, where the delivery is given up (`ageMs` is the time since the event).
 */
export function retryDelayMs(attemptsMade: number, ageMs: number, baseMs: number, random: number = Math.random()): number {
  const full = Math.min(baseMs * 2 ** Math.max(0, attemptsMade - 1), MAX_RETRY_DELAY_MS);
  const jittered = Math.floor(full / 2 + random * (full / 2));
  return Math.max(0, Math.min(jittered, RETRY_WINDOW_MS - ageMs));
}

/** A new invoice's event: an incoming invoice (eingangsrechnung) has its own. */
export const invoiceCreatedEvent = (type: string | undefined): WebhookEventType =>
  type === 'eingangsrechnung' ? 'incoming_invoice.created' : 'invoice.created';
