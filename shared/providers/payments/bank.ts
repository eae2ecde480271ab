import { randomBytes, randomUUID } from 'node:crypto';
import { PayloadError } from './errors';
import type { NormalizedEvent, ProviderAdapter, ProviderSecrets, SyntheticEvent } from './types';
import {
  clip,
  currencyOrThrow,
  decimalAmountOrThrow,
  fromIso,
  nowOf,
  obj,
  parseJsonObject,
  requireSecret,
  signTimestampedHmac,
  str,
  verifyTimestampedHmac,
  withEventIdentity,
  type Json,
} from './util';

/**
 * Banking provider (our own contract; docs/payment-providers.md, "Bank"): `X-Bank-Signature: t=<unix>,v1=<hex>`,
 * HMAC-SHA256 of `${t}.${rawBody}` with the installation's webhookSecret, 300 s tolerance — the
 * Stripe scheme, so several v1 values are accepted while a secret is rolled.
 * Payload: { id, type, createdAt, data: { payment_id, amount: "12.34", currency,
 * executedAt: "YYYY-MM-DD", counterparty: { name, iban, email?, merchantId? }, reference } }.
 */

const HEADER = 'X-Bank-Signature';

/** The X-Bank-Signature value for a body: what the bank sends, and what tests and test-webhook use. */
export function signBankPayload(secret: string, body: string | Buffer, t: number = Math.floor(Date.now() / 1000)): string {
  return signTimestampedHmac(secret, body, t);
}

function isCalendarDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** Maps an already verified bank event. */
export function mapBankEvent(event: Json): NormalizedEvent {
  const eventId = str(event.id);
  const eventType = str(event.type);
  if (!eventId || !eventType) throw new PayloadError('bank', 'body has no id or type');
  const base = { provider: 'bank' as const, eventId, eventType };
  if (eventType !== 'payment_completed' && eventType !== 'payment_failed') {
    return { ...base, kind: 'ignored', externalId: null, amount: null, currency: null, date: null, counterparty: {} };
  }
  const data = obj(event.data);
  const externalId = str(data.payment_id);
  if (!externalId) throw new PayloadError('bank', 'data.payment_id missing');
  const currency = currencyOrThrow('bank', data.currency);
  const amount = decimalAmountOrThrow('bank', data.amount, currency);
  const executedAt = str(data.executedAt);
  if (executedAt !== null && !isCalendarDate(executedAt)) {
    throw new PayloadError('bank', `executedAt ${JSON.stringify(executedAt)} is not YYYY-MM-DD`);
  }
  const created = fromIso(event.createdAt);
  const cp = obj(data.counterparty);
  const iban = str(cp.iban)?.replace(/\s+/g, '').toUpperCase() ?? null;
  return {
    ...base,
    kind: eventType === 'payment_completed' ? 'payment' : 'failure',
    externalId,
    amount,
    currency,
    // The booking date is the execution date; createdAt is when the bank told us.
    date: executedAt ?? created?.date ?? null,
    occurredAt: executedAt ? null : (created?.occurredAt ?? null),
    counterparty: {
      name: clip(cp.name, 200),
      email: clip(cp.email, 320),
      merchantId: str(cp.merchantId),
      iban,
      country: null,
      vatId: null,
    },
    description: clip(data.reference),
    reference: clip(data.reference, 140),
  };
}

async function synthesize(secrets: ProviderSecrets, opts?: { now?: Date }): Promise<SyntheticEvent> {
  const secret = requireSecret('bank', secrets.webhookSecret, 'webhookSecret');
  const now = nowOf(opts ?? {});
  const t = Math.floor(now.getTime() / 1000);
  const body = JSON.stringify({
    id: `evt_synthetic_${randomUUID()}`,
    type: 'payment_completed',
    createdAt: now.toISOString(),
    data: {
      payment_id: `pay_synthetic_${randomBytes(8).toString('hex')}`,
      amount: '12.34',
      currency: 'EUR',
      executedAt: now.toISOString().slice(0, 10),
      counterparty: { name: 'Synthetic Test Supplier', iban: 'AT611904300234573201', email: 'synthetic-test@example.com' },
      reference: 'Synthetic event from POST /api/connectors/bank/test-webhook',
    },
  });
  return {
    rawBody: Buffer.from(body),
    headers: { 'content-type': 'application/json', 'x-bank-signature': signBankPayload(secret, body, t) },
    event: mapBankEvent(JSON.parse(body) as Json),
  };
}

export const bankAdapter: ProviderAdapter = {
  slug: 'bank',
  secretFields: { required: ['webhookSecret'], optional: [] },
  async verifyAndParse(req, ctx) {
    const secret = requireSecret('bank', ctx.secrets.webhookSecret, 'webhookSecret');
    verifyTimestampedHmac('bank', req, HEADER, secret, nowOf(ctx));
    const json = parseJsonObject('bank', req.rawBody);
    return withEventIdentity(json.id, json.type, () => mapBankEvent(json));
  },
  synthesizeTestEvent: synthesize,
};
