import { randomBytes } from 'node:crypto';
import { PayloadError, ProviderUnavailableError, SignatureError } from './errors';
import type { NormalizedEvent, ProviderAdapter, ProviderSecrets, SyntheticEvent, VerifyContext } from './types';
import {
  arr,
  clip,
  currencyOrThrow,
  decimalAmountOrThrow,
  fromIso,
  getHeader,
  hexSignatureMatches,
  hmacSha256,
  isObject,
  obj,
  requireSecret,
  str,
  timeoutMs,
  withEventIdentity,
  type Json,
} from './util';

/**
 * Mollie (classic payment webhooks): the POST carries only `id=tr_…` and no signature, so only the
 * payment fetched from the API with the tenant's key is trusted (docs.mollie.com/reference/webhooks).
 * With a signing secret configured, `X-Mollie-Signature: sha256=<hex>` (HMAC-SHA256 of the raw
 * body, next-gen webhooks) is required too, turning a forged call away before it costs a request.
 */

const PAYMENT_ID = /^tr_[A-Za-z0-9]{1,64}$/;
const OTHER_RESOURCE_ID = /^[a-z]{2,8}_[A-Za-z0-9]{1,64}$/;
/** Refunds that never moved (or will not move) money are not booked. */
const DEAD_REFUND = new Set(['failed', 'canceled']);
const FAILED_PAYMENT: Record<string, string> = { expired: 'expiredAt', failed: 'failedAt', canceled: 'canceledAt' };

function readId(rawBody: Buffer): string {
  const params = new URLSearchParams(rawBody.toString('utf8'));
  const ids = params.getAll('id');
  if (ids.length !== 1 || !ids[0]) throw new SignatureError('mollie', 'malformed_body', 'body is not id=<id>');
  return ids[0];
}

function checkSigningSecret(rawBody: Buffer, header: string | undefined, secret: string): void {
  if (!header) throw new SignatureError('mollie', 'missing_header', 'X-Mollie-Signature header missing');
  // Mollie's SDK accepts the value with or without the sha256= prefix.
  const hex = header.startsWith('sha256=') ? header.slice('sha256='.length) : header;
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new SignatureError('mollie', 'malformed_header', 'X-Mollie-Signature is malformed');
  if (!hexSignatureMatches(hmacSha256(secret, rawBody), hex)) {
    throw new SignatureError('mollie', 'mismatch', 'X-Mollie-Signature does not match the body and the signing secret');
  }
}

function retryAfter(res: Response): number | undefined {
  const v = res.headers.get('retry-after');
  return v && /^\d+$/.test(v) ? Number(v) : undefined;
}

/** GET on the Mollie API with the classification the pipeline needs. */
async function mollieGet(path: string, ctx: VerifyContext, apiKey: string): Promise<Json> {
  const doFetch = ctx.fetch ?? globalThis.fetch;
  const url = `${ctx.config.mollieApiBaseUrl.replace(/\/+$/, '')}${path}`;
  let res: Response;
  try {
    res = await doFetch(url, {
      headers: { authorization: `Bearer ${apiKey}`, accept: 'application/hal+json, application/json' },
      signal: AbortSignal.timeout(timeoutMs(ctx)),
    });
  } catch (e) {
    throw new ProviderUnavailableError('mollie', `GET ${path} failed: ${(e as Error).name}`, { cause: e });
  }
  if (res.status === 401 || res.status === 403) {
    await res.body?.cancel();
    throw new SignatureError('mollie', 'rejected_api_key', `Mollie refused the API key (${res.status})`);
  }
  if (res.status === 429 || res.status >= 500) {
    await res.body?.cancel();
    throw new ProviderUnavailableError('mollie', `GET ${path} answered ${res.status}`, { retryAfterSec: retryAfter(res) });
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    // 404 (and 410/400/422): the API does not know this object for this key → not a real delivery.
    throw new SignatureError('mollie', 'unknown_object', `GET ${path} answered ${res.status}`);
  }
  let body: unknown;
  try {
    body = await res.json();
  } catch (e) {
    throw new ProviderUnavailableError('mollie', `GET ${path} returned unreadable JSON`, { cause: e });
  }
  if (!isObject(body)) throw new ProviderUnavailableError('mollie', `GET ${path} returned no object`);
  return body;
}

function reference(metadata: unknown): string | null {
  if (typeof metadata === 'string') return clip(metadata, 255);
  if (isObject(metadata)) {
    const orderId = metadata.order_id ?? metadata.orderId;
    if (typeof orderId === 'string' || typeof orderId === 'number') return clip(String(orderId), 255);
    return clip(JSON.stringify(metadata), 255);
  }
  return null;
}

function ibanOf(v: unknown): string | null {
  const s = str(v)?.replace(/\s+/g, '').toUpperCase();
  return s && /^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(s) ? s : null;
}

/**
 * Maps a payment as the Mollie API returned it (with its refunds) to the event it stands for.
 * A payment with live refunds yields refund.created for the newest refund; the payment itself and
 * older refunds go to `related`, so the pipeline books whatever it has not booked yet.
 */
export function mapMolliePayment(payment: Json, refunds: Json[]): NormalizedEvent {
  const id = str(payment.id);
  const status = str(payment.status);
  if (!id || !status) throw new PayloadError('mollie', 'payment has no id or status');
  const details = obj(payment.details);
  const billing = obj(payment.billingAddress);
  const counterparty = {
    name: clip(details.consumerName, 200) ?? clip(details.cardHolder, 200),
    email: clip(billing.email, 320),
    merchantId: str(payment.customerId),
    iban: ibanOf(details.consumerAccount),
    country: str(payment.countryCode) ?? str(details.cardCountryCode) ?? str(billing.country),
    vatId: null,
  };
  const ref = reference(payment.metadata);
  const description = clip(payment.description);

  const base = { provider: 'mollie' as const, eventId: `${id}:${status}`, counterparty, description, reference: ref };
  let paymentEvent: NormalizedEvent;
  if (status === 'paid' || Object.hasOwn(FAILED_PAYMENT, status)) {
    const amountObj = obj(payment.amount);
    const currency = currencyOrThrow('mollie', amountObj.currency);
    const paid = status === 'paid';
    const when = fromIso(payment[paid ? 'paidAt' : FAILED_PAYMENT[status]]) ?? fromIso(payment.createdAt);
    paymentEvent = {
      ...base,
      eventType: paid ? 'payment.paid' : 'payment.expired',
      kind: paid ? 'payment' : 'failure',
      externalId: id,
      amount: decimalAmountOrThrow('mollie', amountObj.value, currency),
      currency,
      date: when?.date ?? null,
      occurredAt: when?.occurredAt ?? null,
    };
  } else {
    // open, pending, authorized: nothing has moved yet.
    paymentEvent = { ...base, eventType: `payment.${status}`, kind: 'ignored', externalId: null, amount: null, currency: null, date: null };
  }

  const live = refunds
    .map((r, index) => ({ r, index, at: Date.parse(String(r.createdAt)) }))
    .filter(({ r }) => str(r.id) && !DEAD_REFUND.has(String(r.status)))
    .sort((a, b) => (a.at || 0) - (b.at || 0) || a.index - b.index)
    .map(({ r }) => r);
  if (live.length === 0) return paymentEvent;

  const refundEvents = live.map((r): NormalizedEvent => {
    const amountObj = obj(r.amount);
    const currency = currencyOrThrow('mollie', amountObj.currency);
    const when = fromIso(r.createdAt);
    return {
      provider: 'mollie',
      eventId: `${id}:refund:${str(r.id)}`,
      eventType: 'refund.created',
      kind: 'refund',
      externalId: str(r.id),
      originalExternalId: id,
      amount: decimalAmountOrThrow('mollie', amountObj.value, currency),
      currency,
      date: when?.date ?? null,
      occurredAt: when?.occurredAt ?? null,
      counterparty,
      description: clip(r.description) ?? description,
      reference: ref,
    };
  });
  const newest = refundEvents[refundEvents.length - 1];
  const related = [...(paymentEvent.kind === 'payment' ? [paymentEvent] : []), ...refundEvents.slice(0, -1)];
  return { ...newest, related };
}

/**
 * test-webhook's stand-in for the Mollie API: an origin on the reserved .invalid TLD (RFC 2606),
 * used only in test-webhook's own context; the in-memory fetch below answers it.
 */
const SYNTHETIC_API_BASE = 'https://mollie-test-webhook.invalid';

/**
 * An `id=tr_…` delivery (with X-Mollie-Signature when a signing secret is stored) and a stand-in
 * for the Mollie API that knows only this payment and only for the stored API key, so the
 * verification code runs as for a real delivery: signature, id check, GET with the bearer key,
 * answer classification, mapping.
 */
async function synthesize(secrets: ProviderSecrets, opts?: { now?: Date }): Promise<SyntheticEvent> {
  const apiKey = requireSecret('mollie', secrets.apiKey, 'apiKey');
  const now = (opts?.now ?? new Date()).toISOString();
  const id = `tr_synth${randomBytes(5).toString('hex')}`;
  const payment: Json = {
    resource: 'payment',
    id,
    mode: 'test',
    createdAt: now,
    amount: { value: '12.34', currency: 'EUR' },
    description: 'Synthetic event from POST /api/connectors/mollie/test-webhook',
    method: 'ideal',
    metadata: { order_id: 'TEST-0001' },
    status: 'paid',
    paidAt: now,
    details: { consumerName: 'Synthetic Test Customer', consumerAccount: 'NL17RABO0213698412', consumerBic: 'TESTNL99' },
    countryCode: 'NL',
  };
  const rawBody = Buffer.from(`id=${id}`);
  const paymentUrl = `${SYNTHETIC_API_BASE}/v2/payments/${id}?embed=refunds`;
  const stubFetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith(`${SYNTHETIC_API_BASE}/`)) throw new TypeError(`test-webhook makes no network calls (${url})`);
    const hal = { 'content-type': 'application/hal+json' };
    if (new Headers(init?.headers).get('authorization') !== `Bearer ${apiKey}`) {
      return new Response(JSON.stringify({ status: 401, title: 'Unauthorized Request' }), { status: 401, headers: hal });
    }
    if (url !== paymentUrl) return new Response(JSON.stringify({ status: 404, title: 'Not Found' }), { status: 404, headers: hal });
    return new Response(JSON.stringify(payment), { status: 200, headers: hal });
  }) as typeof fetch;
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (secrets.signingSecret) headers['x-mollie-signature'] = `sha256=${hmacSha256(secrets.signingSecret, rawBody).toString('hex')}`;
  return {
    rawBody,
    headers,
    event: mapMolliePayment(payment, []),
    providerStub: {
      fetch: stubFetch,
      config: { mollieApiBaseUrl: SYNTHETIC_API_BASE },
      detail: `fetched with the stored API key from an in-memory Mollie API that knows the synthetic payment (no network)${secrets.signingSecret ? '; X-Mollie-Signature made with the stored signing secret' : ''}`,
    },
  };
}

export const mollieAdapter: ProviderAdapter = {
  slug: 'mollie',
  secretFields: { required: ['apiKey'], optional: ['signingSecret'] },
  async verifyAndParse(req, ctx) {
    const apiKey = requireSecret('mollie', ctx.secrets.apiKey, 'apiKey');
    if (ctx.secrets.signingSecret) {
      checkSigningSecret(req.rawBody, getHeader('mollie', req, 'X-Mollie-Signature'), ctx.secrets.signingSecret);
    }
    const id = readId(req.rawBody);
    if (!PAYMENT_ID.test(id)) {
      if (!OTHER_RESOURCE_ID.test(id)) throw new SignatureError('mollie', 'malformed_body', 'id is not a Mollie id');
      // Orders, subscriptions…: not booked by this connector, so nothing to verify or create.
      return {
        provider: 'mollie',
        eventId: `${id}:unsupported`,
        eventType: 'unsupported_resource',
        kind: 'ignored',
        externalId: null,
        amount: null,
        currency: null,
        date: null,
        counterparty: {},
      };
    }
    const payment = await mollieGet(`/v2/payments/${id}?embed=refunds`, ctx, apiKey);
    if (payment.id !== id) throw new ProviderUnavailableError('mollie', 'API answered with another payment');
    let refunds = arr(obj(payment._embedded).refunds).map(obj);
    // Without the embed (or if it was ignored) but with money refunded, ask the refunds endpoint.
    const refunded = str(obj(payment.amountRefunded).value);
    if (refunds.length === 0 && (isObject(obj(payment._links).refunds) || (refunded !== null && !/^0+(\.0+)?$/.test(refunded)))) {
      const list = await mollieGet(`/v2/payments/${id}/refunds?limit=250`, ctx, apiKey);
      refunds = arr(obj(list._embedded).refunds).map(obj);
    }
    return withEventIdentity(`${id}:${str(payment.status) ?? 'unknown'}`, `payment.${str(payment.status) ?? 'unknown'}`, () =>
      mapMolliePayment(payment, refunds),
    );
  },
  synthesizeTestEvent: synthesize,
};
