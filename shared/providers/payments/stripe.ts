import { randomBytes } from 'node:crypto';
import { currencyExponent } from './currency';
import { PayloadError } from './errors';
import type { NormalizedEvent, ProviderAdapter, ProviderSecrets, SyntheticEvent } from './types';
import {
  arr,
  clip,
  currencyOrThrow,
  fromUnix,
  minorAmountOrThrow,
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
 * Stripe: https://docs.stripe.com/webhooks#verify-manually
 * `Stripe-Signature: t=<unix>,v1=<hex>[,v1=…][,v0=…]`, HMAC-SHA256 of `${t}.${rawBody}` keyed with
 * the endpoint's whole whsec_… string; any v1 may match (secret roll); 300 s tolerance.
 */

const HEADER = 'Stripe-Signature';

/**
 * Stripe's minor units follow ISO 4217 except: ISK stays two-decimal in the API (an amount of 100
 * is 1 króna) and MGA is zero-decimal. https://docs.stripe.com/currencies#special-cases and
 * #zero-decimal.
 */
const STRIPE_EXPONENT: Readonly<Record<string, number>> = { ISK: 2, MGA: 0 };
export function stripeExponent(currency: string): number {
  return STRIPE_EXPONENT[currency.toUpperCase()] ?? currencyExponent(currency);
}

function money(minor: unknown, currencyRaw: unknown): { amount: string; currency: string } {
  const currency = currencyOrThrow('stripe', currencyRaw);
  return { amount: minorAmountOrThrow('stripe', minor, currency, stripeExponent(currency)), currency };
}

function requireId(v: unknown, what: string): string {
  const id = str(v);
  if (!id) throw new PayloadError('stripe', `${what} has no id`);
  return id;
}

/** EU VAT id from Stripe's customer_tax_ids ([{ type: 'eu_vat', value }]). */
function euVatId(invoice: Json): string | null {
  for (const t of arr(invoice.customer_tax_ids)) {
    const o = obj(t);
    if (o.type === 'eu_vat' && str(o.value)) return str(o.value);
  }
  return null;
}

/** An id field that may also come expanded as an object ({ id, … }). */
function idOf(v: unknown): string | null {
  return str(v) ?? str(obj(v).id);
}

/** The refs worth recording: pi_… and ch_… ids only, each once. */
function refsOf(...ids: Array<string | null>): string[] {
  return [...new Set(ids.filter((id): id is string => !!id && /^(pi|ch|py)_[A-Za-z0-9_]+$/.test(id)))];
}

/**
 * The PaymentIntent and Charge behind a paid invoice, by which its refund (charge.refunded) names
 * it. Older API versions put them on the invoice (charge, payment_intent); since 2025-03-31.basil
 * they are on InvoicePayment objects: in invoice.payments when it is included (it is not, by
 * default, in webhook events) and in the invoice_payment.paid event, which is mapped below.
 */
function invoicePaymentRefs(invoice: Json): string[] {
  const fromPayments = arr(obj(invoice.payments).data)
    .map(obj)
    .filter((p) => p.status === undefined || p.status === 'paid')
    .flatMap((p) => [idOf(obj(p.payment).payment_intent), idOf(obj(p.payment).charge)]);
  return refsOf(idOf(invoice.payment_intent), idOf(invoice.charge), ...fromPayments);
}

function mapInvoiceEvent(event: Json, base: Pick<NormalizedEvent, 'provider' | 'eventId' | 'eventType'>, succeeded: boolean): NormalizedEvent {
  const invoice = obj(obj(event.data).object);
  const externalId = requireId(invoice.id, 'invoice');
  // amount_paid for a payment; for a failed attempt, what was due (nothing moved).
  const { amount, currency } = money(succeeded ? invoice.amount_paid : invoice.amount_due, invoice.currency);
  const when = (succeeded ? fromUnix(obj(invoice.status_transitions).paid_at) : null) ?? fromUnix(event.created);
  const firstLine = obj(arr(obj(invoice.lines).data)[0]);
  // An invoice paid in full by credit or a 100 % discount moves no money: nothing to book.
  const kind = !succeeded ? 'failure' : /^0+(\.0+)?$/.test(amount) ? 'ignored' : 'payment';
  const refs = kind === 'payment' ? invoicePaymentRefs(invoice) : [];
  return {
    ...base,
    kind,
    externalId,
    ...(refs.length ? { paymentRefs: { externalId, refs } } : {}),
    amount,
    currency,
    date: when?.date ?? null,
    occurredAt: when?.occurredAt ?? null,
    counterparty: {
      name: clip(invoice.customer_name, 200),
      email: clip(invoice.customer_email, 320),
      // Connect deliveries name the connected account; otherwise the customer is the stable id.
      merchantId: str(event.account) ?? str(invoice.customer),
      country: str(obj(invoice.customer_address).country),
      vatId: euVatId(invoice),
      iban: null,
    },
    description: clip(invoice.description) ?? clip(firstLine.description),
    reference: clip(invoice.number, 100),
  };
}

function mapChargeRefunded(event: Json, base: Pick<NormalizedEvent, 'provider' | 'eventId' | 'eventType'>): NormalizedEvent {
  const charge = obj(obj(event.data).object);
  const chargeId = requireId(charge.id, 'charge');
  const currency = currencyOrThrow('stripe', charge.currency);

  // Stripe lists refunds newest first; take the newest that did not fail.
  const refunds = arr(obj(charge.refunds).data)
    .map(obj)
    .filter((r) => str(r.id) && r.status !== 'failed' && r.status !== 'canceled');
  let newest: Json | null = null;
  for (const r of refunds) {
    // Strictly later only: on a tie the earlier list entry (Stripe's newest) wins.
    if (newest === null || (Number(r.created) || 0) > (Number(newest.created) || 0)) newest = r;
  }

  let externalId: string;
  let amount: string;
  let when = fromUnix(event.created);
  if (newest) {
    externalId = str(newest.id)!;
    amount = money(newest.amount, newest.currency ?? charge.currency).amount;
    when = fromUnix(newest.created) ?? when;
  } else {
    // Since API version 2022-11-15 charge.refunds is no longer included in events. Without the
    // refund object, the cumulative amount_refunded identifies this refund state, and
    // previous_attributes (sent with charge.refunded) gives this refund's own amount.
    const total = charge.amount_refunded;
    const before = obj(obj(event.data).previous_attributes).amount_refunded;
    if (typeof total !== 'number' || !Number.isSafeInteger(total)) throw new PayloadError('stripe', 'charge has no amount_refunded');
    const delta = typeof before === 'number' && Number.isSafeInteger(before) ? total - before : total;
    externalId = `${chargeId}:refunded:${total}`;
    amount = minorAmountOrThrow('stripe', delta, currency, stripeExponent(currency));
  }

  const billing = obj(charge.billing_details);
  return {
    ...base,
    kind: 'refund',
    externalId,
    // Older API versions carry the invoice on the charge, which is the payment's externalId.
    // Since 2025-03-31.basil they do not (invoice ↔ charge goes through InvoicePayment): the
    // pipeline then finds the invoice through the PaymentIntent / Charge ids recorded from
    // invoice_payment.paid (or the invoice itself). See docs/payment-providers.md.
    originalExternalId: idOf(charge.invoice),
    originalRefs: refsOf(idOf(charge.payment_intent), chargeId),
    amount,
    currency,
    date: when?.date ?? null,
    occurredAt: when?.occurredAt ?? null,
    counterparty: {
      name: clip(billing.name, 200),
      email: clip(billing.email, 320) ?? clip(charge.receipt_email, 320),
      merchantId: str(event.account) ?? str(charge.customer),
      country: str(obj(billing.address).country),
      vatId: null,
      iban: null,
    },
    description: clip(charge.description),
    reference: null,
  };
}

/**
 * invoice_payment.paid (API 2025-03-31.basil and later): books nothing — invoice.payment_succeeded
 * books the payment — but it is the only event that says which PaymentIntent / Charge paid which
 * invoice, which a later charge.refunded needs to find the invoice.
 */
function mapInvoicePaymentPaid(event: Json, base: Pick<NormalizedEvent, 'provider' | 'eventId' | 'eventType'>): NormalizedEvent {
  const ip = obj(obj(event.data).object);
  const invoiceId = idOf(ip.invoice);
  const payment = obj(ip.payment);
  const refs = refsOf(idOf(payment.payment_intent), idOf(payment.charge));
  return {
    ...base,
    kind: 'ignored',
    externalId: null,
    amount: null,
    currency: null,
    date: null,
    counterparty: {},
    ...(invoiceId && refs.length && ip.status === 'paid' ? { paymentRefs: { externalId: invoiceId, refs } } : {}),
  };
}

/** Maps an already verified Stripe event object. */
export function mapStripeEvent(event: Json): NormalizedEvent {
  const eventId = str(event.id);
  const eventType = str(event.type);
  if (!eventId || !eventType || event.object !== 'event') throw new PayloadError('stripe', 'body is not a Stripe event');
  const base = { provider: 'stripe' as const, eventId, eventType };
  switch (eventType) {
    case 'invoice.payment_succeeded':
      return mapInvoiceEvent(event, base, true);
    case 'invoice.payment_failed':
      return mapInvoiceEvent(event, base, false);
    case 'charge.refunded':
      return mapChargeRefunded(event, base);
    case 'invoice_payment.paid':
      return mapInvoicePaymentPaid(event, base);
    default:
      return { ...base, kind: 'ignored', externalId: null, amount: null, currency: null, date: null, counterparty: {} };
  }
}

async function synthesize(secrets: ProviderSecrets, opts?: { now?: Date }): Promise<SyntheticEvent> {
  const secret = requireSecret('stripe', secrets.webhookSecret, 'webhookSecret');
  const now = nowOf(opts ?? {});
  const t = Math.floor(now.getTime() / 1000);
  const suffix = randomBytes(8).toString('hex');
  const body = JSON.stringify({
    id: `evt_test_${suffix}`,
    object: 'event',
    api_version: '2026-07-29.dahlia',
    created: t,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: 'invoice.payment_succeeded',
    data: {
      object: {
        id: `in_test_${suffix}`,
        object: 'invoice',
        amount_due: 1234,
        amount_paid: 1234,
        amount_remaining: 0,
        currency: 'eur',
        customer: `cus_test_${suffix}`,
        customer_email: 'synthetic-test@example.com',
        customer_name: 'Synthetic Test Customer',
        customer_address: { country: 'AT' },
        customer_tax_ids: [],
        description: 'Synthetic event from POST /api/connectors/stripe/test-webhook',
        number: 'TEST-0001',
        livemode: false,
        status: 'paid',
        status_transitions: { finalized_at: t, paid_at: t },
        lines: { object: 'list', data: [] },
      },
    },
  });
  return {
    rawBody: Buffer.from(body),
    headers: { 'content-type': 'application/json', 'stripe-signature': signTimestampedHmac(secret, body, t) },
    event: mapStripeEvent(JSON.parse(body) as Json),
  };
}

export const stripeAdapter: ProviderAdapter = {
  slug: 'stripe',
  secretFields: { required: ['webhookSecret'], optional: [] },
  async verifyAndParse(req, ctx) {
    const secret = requireSecret('stripe', ctx.secrets.webhookSecret, 'webhookSecret');
    verifyTimestampedHmac('stripe', req, HEADER, secret, nowOf(ctx));
    const json = parseJsonObject('stripe', req.rawBody);
    return withEventIdentity(json.id, json.type, () => mapStripeEvent(json));
  },
  synthesizeTestEvent: synthesize,
};
