import { X509Certificate, randomBytes, randomUUID, sign as signData, verify as verifySignature } from 'node:crypto';
import { PayloadError, ProviderUnavailableError, SignatureError } from './errors';
import { createSelfSignedCert } from './selfSignedCert';
import type { NormalizedEvent, ProviderAdapter, ProviderSecrets, SyntheticEvent, VerifyContext } from './types';
import {
  arr,
  assertWithinTolerance,
  clip,
  currencyOrThrow,
  decimalAmountOrThrow,
  fromIso,
  getHeader,
  nowOf,
  obj,
  parseJsonObject,
  requireSecret,
  str,
  timeoutMs,
  withEventIdentity,
  type Json,
} from './util';

/**
 * PayPal (REST webhooks, Payments v2): offline verification as in PayPal's SDKs, SHA256withRSA over
 * `${transmissionId}|${transmissionTime}|${webhookId}|${crc32(rawBody)}` (CRC32 unsigned decimal).
 * The certificate URL comes in the request, so only allow-listed origins are fetched (anyone could
 * otherwise sign with their own key). The signed transmission time must be within 300 s of our
 * clock, or a captured delivery could be replayed for ever. docs/payment-providers.md, "PayPal".
 */

// ---- CRC32 (IEEE 802.3, the one zlib.crc32 computes; kept here so Node < 20.15 works too) ----
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC32 of the bytes as an unsigned 32-bit integer. */
export function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = CRC_TABLE[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** The exact string PayPal signs. */
export function paypalSignedString(transmissionId: string, transmissionTime: string, webhookId: string, rawBody: Buffer): string {
  return `${transmissionId}|${transmissionTime}|${webhookId}|${crc32(rawBody)}`;
}

// ---- certificate URL allow-list ----
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Exact origin match against the allow-list. https is required; an http entry is honoured only for
 * a loopback host (tests serve their own certificate there), so a misconfigured "http://api.paypal.com"
 * cannot open the door to a man in the middle.
 */
export function isAllowedCertUrl(certUrl: string, allowList: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(certUrl);
  } catch {
    return false;
  }
  if (url.username || url.password) return false;
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) return false;
  return allowList.some((entry) => {
    try {
      const allowed = new URL(entry);
      if (allowed.protocol === 'http:' && !LOOPBACK.has(allowed.hostname)) return false;
      return allowed.origin === url.origin;
    } catch {
      return false;
    }
  });
}

// ---- certificate cache ----
// A PayPal cert URL names one certificate (CERT-<id>), so its content does not change; the TTL only
// bounds memory and lets a revoked certificate drop out.
const CERT_TTL_MS = 6 * 3600_000;
const CERT_CACHE_MAX = 50;
const MAX_CERT_BYTES = 64 * 1024;
const certCache = new Map<string, { cert: X509Certificate; expiresAt: number }>();
const inflight = new Map<string, Promise<X509Certificate>>();

/** Tests only: forget cached certificates. */
export function clearPaypalCertCache(): void {
  certCache.clear();
  inflight.clear();
}

async function downloadCert(url: string, ctx: VerifyContext): Promise<X509Certificate> {
  const doFetch = ctx.fetch ?? globalThis.fetch;
  let res: Response;
  let text: string;
  try {
    // No redirects: the allow-list applies to the URL we fetch, not to wherever it points.
    res = await doFetch(url, { redirect: 'manual', signal: AbortSignal.timeout(timeoutMs(ctx)) });
    if (res.status >= 500 || res.status === 429) {
      throw new ProviderUnavailableError('paypal', `certificate download answered ${res.status}`);
    }
    if (res.status !== 200) {
      throw new SignatureError('paypal', 'invalid_certificate', `certificate download answered ${res.status}`);
    }
    const bytes = Buffer.from(await res.arrayBuffer());
    if (bytes.length > MAX_CERT_BYTES) throw new SignatureError('paypal', 'invalid_certificate', 'certificate response too large');
    text = bytes.toString('utf8');
  } catch (e) {
    if (e instanceof SignatureError || e instanceof ProviderUnavailableError) throw e;
    throw new ProviderUnavailableError('paypal', 'certificate download failed', { cause: e });
  }
  // The URL may serve a chain; the first certificate is the signing one.
  const first = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(text);
  try {
    if (!first) throw new Error('no PEM certificate');
    return new X509Certificate(first[0]);
  } catch {
    throw new SignatureError('paypal', 'invalid_certificate', 'certificate is not a readable X.509 PEM');
  }
}

async function getCert(url: string, ctx: VerifyContext, nowMs: number): Promise<X509Certificate> {
  const hit = certCache.get(url);
  if (hit && hit.expiresAt > nowMs) return hit.cert;
  let pending = inflight.get(url);
  if (!pending) {
    pending = downloadCert(url, ctx).finally(() => inflight.delete(url));
    inflight.set(url, pending);
  }
  const cert = await pending;
  certCache.delete(url);
  if (certCache.size >= CERT_CACHE_MAX) certCache.delete(certCache.keys().next().value!);
  certCache.set(url, { cert, expiresAt: nowMs + CERT_TTL_MS });
  return cert;
}

function assertCertUsable(cert: X509Certificate, now: Date): void {
  const from = Date.parse(cert.validFrom);
  const to = Date.parse(cert.validTo);
  if (Number.isNaN(from) || Number.isNaN(to) || now.getTime() < from || now.getTime() > to) {
    throw new SignatureError('paypal', 'invalid_certificate', `certificate not valid at ${now.toISOString()} (${cert.validFrom} – ${cert.validTo})`);
  }
  if (cert.publicKey.asymmetricKeyType !== 'rsa') {
    throw new SignatureError('paypal', 'invalid_certificate', 'certificate key is not RSA');
  }
}

// ---- mapping ----
function link(resource: Json, rel: string): string | null {
  for (const l of arr(resource.links)) {
    const o = obj(l);
    if (o.rel === rel && str(o.href)) return str(o.href);
  }
  return null;
}

/** The refunded capture: rel "up" of a refund points at /v2/payments/captures/<id>. */
function capturedIdOf(resource: Json): string | null {
  const up = link(resource, 'up');
  if (up) {
    try {
      const m = /\/v2\/payments\/captures\/([A-Za-z0-9-]+)\/?$/.exec(new URL(up).pathname);
      if (m) return m[1];
    } catch {
      /* not a URL: fall through */
    }
  }
  return str(obj(obj(resource.supplementary_data).related_ids).capture_id);
}

function personName(payer: Json): string | null {
  const n = obj(payer.name);
  const full = str(n.full_name) ?? [str(n.given_name), str(n.surname)].filter(Boolean).join(' ');
  return full ? full : null;
}

/** Maps an already verified PayPal webhook event. */
export function mapPaypalEvent(event: Json): NormalizedEvent {
  const eventId = str(event.id);
  const eventType = str(event.event_type);
  if (!eventId || !eventType) throw new PayloadError('paypal', 'body is not a PayPal webhook event');
  const base = { provider: 'paypal' as const, eventId, eventType };
  if (eventType !== 'PAYMENT.CAPTURE.COMPLETED' && eventType !== 'PAYMENT.CAPTURE.REFUNDED') {
    return { ...base, kind: 'ignored', externalId: null, amount: null, currency: null, date: null, counterparty: {} };
  }
  const resource = obj(event.resource);
  const externalId = str(resource.id);
  if (!externalId) throw new PayloadError('paypal', 'resource has no id');
  const amountObj = obj(resource.amount);
  const currency = currencyOrThrow('paypal', amountObj.currency_code);
  // PayPal amounts are already decimal strings ("2.51"; JPY "100").
  const amount = decimalAmountOrThrow('paypal', amountObj.value, currency);
  const when = fromIso(resource.create_time) ?? fromIso(event.create_time);
  const payer = obj(resource.payer);
  const payee = obj(resource.payee);
  return {
    ...base,
    kind: eventType === 'PAYMENT.CAPTURE.COMPLETED' ? 'payment' : 'refund',
    externalId,
    ...(eventType === 'PAYMENT.CAPTURE.REFUNDED' ? { originalExternalId: capturedIdOf(resource) } : {}),
    amount,
    currency,
    date: when?.date ?? null,
    occurredAt: when?.occurredAt ?? null,
    counterparty: {
      name: clip(personName(payer), 200),
      email: clip(payer.email_address, 320) ?? clip(payee.email_address, 320),
      // Not platform_fees[].payee: that is the platform taking a fee, not the counterparty.
      merchantId: str(payee.merchant_id),
      country: str(obj(payer.address).country_code),
      vatId: null,
      iban: null,
    },
    description: clip(event.summary),
    reference: clip(resource.invoice_id, 127) ?? clip(resource.custom_id, 127),
  };
}

/** RFC 3339 as PayPal sends it ("2024-08-02T19:33:35Z", fractions and offsets allowed) → unix seconds. */
function transmissionSeconds(value: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw new SignatureError('paypal', 'malformed_header', 'PAYPAL-TRANSMISSION-TIME is not an RFC 3339 time');
  return Math.floor(ms / 1000);
}

/**
 * test-webhook's stand-in for PayPal's certificate host: an origin on the reserved .invalid TLD
 * (RFC 2606), put on the allow-list only in test-webhook's own context, so the production
 * allow-list never admits it and the in-memory fetch below never reaches a network.
 */
const SYNTHETIC_CERT_ORIGIN = 'https://paypal-test-webhook.invalid';

/**
 * A PAYMENT.CAPTURE.COMPLETED delivery signed the way PayPal signs, for the stored webhook id, with
 * a throwaway RSA key whose self-signed certificate only the returned fetch serves. Verifying it
 * runs all of verifyAndParse: headers, allow-list, download, validity, CRC32 string, RSA, replay.
 */
async function synthesize(secrets: ProviderSecrets, opts?: { now?: Date }): Promise<SyntheticEvent> {
  const webhookId = requireSecret('paypal', secrets.webhookId, 'webhookId');
  const now = opts?.now ?? new Date();
  const suffix = randomBytes(6).toString('hex').toUpperCase();
  const captureId = `SYNTH${suffix}`;
  const body = JSON.stringify({
    id: `WH-SYNTHETIC-${suffix}`,
    event_version: '1.0',
    create_time: now.toISOString(),
    resource_type: 'capture',
    resource_version: '2.0',
    event_type: 'PAYMENT.CAPTURE.COMPLETED',
    summary: 'Synthetic event from POST /api/connectors/paypal/test-webhook',
    resource: {
      id: captureId,
      amount: { currency_code: 'EUR', value: '12.34' },
      final_capture: true,
      status: 'COMPLETED',
      invoice_id: 'TEST-0001',
      payee: { merchant_id: 'SYNTHETICMERCHANT', email_address: 'synthetic-test@example.com' },
      create_time: now.toISOString(),
      update_time: now.toISOString(),
      links: [{ href: `https://api.paypal.com/v2/payments/captures/${captureId}`, rel: 'self', method: 'GET' }],
    },
  });
  const rawBody = Buffer.from(body);
  const { certPem, privateKey } = await createSelfSignedCert({
    commonName: 'paypal-test-webhook.invalid',
    notBefore: new Date(now.getTime() - 5 * 60_000),
    notAfter: new Date(now.getTime() + 60 * 60_000),
  });
  // A URL of its own per call: the certificate cache is keyed by URL.
  const certUrl = `${SYNTHETIC_CERT_ORIGIN}/v1/notifications/certs/CERT-synthetic-${randomBytes(12).toString('hex')}`;
  const transmissionId = randomUUID();
  const transmissionTime = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const signature = signData('sha256', Buffer.from(paypalSignedString(transmissionId, transmissionTime, webhookId, rawBody)), privateKey);
  const stubFetch = (async (input: string | URL | Request) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (url !== certUrl) throw new TypeError(`test-webhook makes no network calls (${url})`);
    return new Response(certPem, { status: 200, headers: { 'content-type': 'application/x-pem-file' } });
  }) as typeof fetch;
  return {
    rawBody,
    headers: {
      'content-type': 'application/json',
      'paypal-transmission-id': transmissionId,
      'paypal-transmission-time': transmissionTime,
      'paypal-transmission-sig': signature.toString('base64'),
      'paypal-cert-url': certUrl,
      'paypal-auth-algo': 'SHA256withRSA',
      'paypal-auth-version': 'v2',
    },
    event: mapPaypalEvent(JSON.parse(body) as Json),
    providerStub: {
      fetch: stubFetch,
      config: { paypalCertHostAllowList: [SYNTHETIC_CERT_ORIGIN] },
      detail: 'signed for the stored webhook id with a throwaway RSA key; its self-signed certificate is served in memory (no network)',
    },
  };
}

export const paypalAdapter: ProviderAdapter = {
  slug: 'paypal',
  secretFields: { required: ['webhookId'], optional: [] },
  async verifyAndParse(req, ctx) {
    const webhookId = requireSecret('paypal', ctx.secrets.webhookId, 'webhookId');
    const h = (name: string) => getHeader('paypal', req, name);
    const transmissionId = h('PAYPAL-TRANSMISSION-ID');
    const transmissionTime = h('PAYPAL-TRANSMISSION-TIME');
    const sig = h('PAYPAL-TRANSMISSION-SIG');
    const certUrl = h('PAYPAL-CERT-URL');
    const algo = h('PAYPAL-AUTH-ALGO');
    if (!transmissionId || !transmissionTime || !sig || !certUrl || !algo) {
      throw new SignatureError('paypal', 'missing_header', 'a PAYPAL-TRANSMISSION-* / CERT-URL / AUTH-ALGO header is missing');
    }
    // Never let the request choose a weaker algorithm.
    if (algo.toUpperCase() !== 'SHA256WITHRSA') throw new SignatureError('paypal', 'unsupported_algorithm', `auth algo ${algo} not accepted`);
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(sig)) throw new SignatureError('paypal', 'malformed_header', 'PAYPAL-TRANSMISSION-SIG is not base64');
    const sentAt = transmissionSeconds(transmissionTime);
    if (!isAllowedCertUrl(certUrl, ctx.config.paypalCertHostAllowList)) {
      throw new SignatureError('paypal', 'untrusted_cert_url', 'PAYPAL-CERT-URL is not on the allow-list');
    }
    const now = nowOf(ctx);
    const cert = await getCert(certUrl, ctx, now.getTime());
    assertCertUsable(cert, now);
    const signed = Buffer.from(paypalSignedString(transmissionId, transmissionTime, webhookId, req.rawBody), 'utf8');
    let ok = false;
    try {
      ok = verifySignature('sha256', signed, cert.publicKey, Buffer.from(sig, 'base64'));
    } catch {
      ok = false;
    }
    if (!ok) throw new SignatureError('paypal', 'mismatch', 'signature does not match body, webhook id and certificate');
    // After the signature, as for Stripe: the time is only worth judging once it is known to be PayPal's.
    assertWithinTolerance('paypal', sentAt, now);
    const json = parseJsonObject('paypal', req.rawBody);
    return withEventIdentity(json.id, json.event_type, () => mapPaypalEvent(json));
  },
  synthesizeTestEvent: synthesize,
};
