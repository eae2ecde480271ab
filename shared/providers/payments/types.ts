/**
 * The contract between the provider-agnostic webhook pipeline and one adapter per payment
 * provider: how its deliveries are authenticated and how its payload maps to NormalizedEvent. No
 * database, queue or tenant knowledge; the only I/O is what verification needs (PayPal's
 * certificate, Mollie's API). What each error means to the pipeline (SignatureError 400,
 * PayloadError 200 + failed, ProviderUnavailableError 503): docs/payment-providers.md.
 */

import type { ProviderSlug } from '../../domain/paymentProviders';

export type { ProviderSlug };

/** What POST /api/connectors/<slug>/install stores (encrypted) for a tenant. */
export interface ProviderSecrets {
  /** stripe (whsec_…) and bank: the HMAC key. */
  webhookSecret?: string;
  /** paypal: the id of the webhook in the PayPal app; part of the signed string. */
  webhookId?: string;
  /** mollie: live_… or test_… API key used to fetch the payment. */
  apiKey?: string;
  /** mollie (optional): when set, X-Mollie-Signature is required as well. */
  signingSecret?: string;
}

/** The delivery exactly as received. rawBody must be the unparsed bytes: signatures cover them. */
export interface InboundRequest {
  rawBody: Buffer;
  /** Header names in any case (Node gives lower case); lookups are case-insensitive. */
  headers: Record<string, string | string[] | undefined>;
}

export type EventKind = 'payment' | 'refund' | 'failure' | 'ignored';

export interface Counterparty {
  name?: string | null;
  email?: string | null;
  /**
   * The provider's stable id of the other party, matched against suppliers.merchant_ids[provider]:
   * stripe: connected account (event.account) else customer (cus_…); paypal: payee merchant_id;
   * mollie: customerId (cst_…); bank: counterparty.merchantId.
   */
  merchantId?: string | null;
  iban?: string | null;
  /** ISO 3166-1 alpha-2. */
  country?: string | null;
  vatId?: string | null;
}

export interface NormalizedEvent {
  provider: ProviderSlug;
  /** The webhook log row's externalId: the provider's event id (mollie has none: `${tr_id}:${status}`, refunds `${tr_id}:refund:${re_id}`). */
  eventId: string;
  /** Provider event name, e.g. invoice.payment_succeeded, PAYMENT.CAPTURE.COMPLETED, payment.paid. */
  eventType: string;
  /**
   * payment → paid incoming invoice; refund → negative incoming invoice linked to the original;
   * failure → nothing created, logged processed; ignored → an event we do not book.
   */
  kind: EventKind;
  /**
   * Identifier of the money movement: the incoming invoice's invoiceNumber and externalId and,
   * with the provider slug, the duplicate key. stripe in_… (refund re_…), paypal capture id
   * (refund id), mollie tr_… (re_…), bank data.payment_id. null for ignored events.
   */
  externalId: string | null;
  /** Refunds only: the externalId of the payment that was refunded (null when the provider does not say). */
  originalExternalId?: string | null;
  /**
   * Refunds only: other ids the provider gives the refunded payment (stripe: the charge's
   * payment_intent pi_… and the charge ch_…). The pipeline resolves them through the references
   * recorded from `paymentRefs` when originalExternalId is missing or unknown.
   */
  originalRefs?: string[];
  /**
   * Other ids of a payment by which a later refund may name it, with the payment's externalId
   * (stripe: invoice in_… ← its PaymentIntent pi_… / Charge ch_…, from the invoice on older API
   * versions or from invoice_payment.paid on current ones). The pipeline records them
   * (provider_payment_refs) whatever the event's kind; an event that carries only them books nothing.
   */
  paymentRefs?: { externalId: string; refs: string[] } | null;
  /**
   * Positive decimal string; the pipeline negates refunds. Two places ("12.30"), or the currency's
   * ISO 4217 exponent when that is larger (KWD "1.234"): an adapter never rounds money away.
   */
  amount: string | null;
  /** ISO 4217, upper case. */
  currency: string | null;
  /** YYYY-MM-DD (UTC) of the money movement. */
  date: string | null;
  /** ISO 8601 UTC instant of the money movement when the provider gives a time (for local-date bookkeeping). */
  occurredAt?: string | null;
  counterparty: Counterparty;
  description?: string | null;
  /** The merchant's own reference, if the provider carries one (invoice number, order id, bank reference). */
  reference?: string | null;
  /**
   * Further money movements the same verified answer proved, oldest first, to be processed before
   * this event with the same duplicate rule. Only mollie fills it: its webhook says only "payment
   * tr_… changed", so each call reports the payment's whole state (the payment and every refund)
   * and a lost or raced delivery cannot lose a booking.
   */
  related?: NormalizedEvent[];
}

/** The subset of shared/config.ts the adapters need; Config satisfies it structurally. */
export interface PaymentProviderConfig {
  /**
   * Origins (scheme://host[:port]) PayPal certificates may be fetched from. Exact origin match;
   * https only, except http on a loopback host, which exists for tests.
   */
  paypalCertHostAllowList: string[];
  /** https://api.mollie.com in production; a local fake in tests. */
  mollieApiBaseUrl: string;
  /** Timeout of each outbound call made during verification. Default 10 000 ms. */
  providerHttpTimeoutMs?: number;
}

export const DEFAULT_PAYMENT_PROVIDER_CONFIG: Readonly<Required<PaymentProviderConfig>> = Object.freeze({
  paypalCertHostAllowList: ['https://api.paypal.com', 'https://api-m.paypal.com', 'https://api.sandbox.paypal.com', 'https://api-m.sandbox.paypal.com'],
  mollieApiBaseUrl: 'https://api.mollie.com',
  providerHttpTimeoutMs: 10_000,
});

export interface VerifyContext {
  secrets: ProviderSecrets;
  config: PaymentProviderConfig;
  /** Clock for timestamp tolerance and certificate validity; defaults to the real time. */
  now?: Date;
  /** Injected for tests; defaults to globalThis.fetch. */
  fetch?: typeof fetch;
}

/**
 * A synthetic, correctly signed delivery for POST /api/connectors/<slug>/test-webhook, run through
 * verifyAndParse like a real one; the result equals `event`. PayPal and Mollie verify against the
 * provider, so `providerStub` plays that side in memory (certificate host, payments API). There is
 * deliberately no flag on verifyAndParse that skips verification, so no request can switch it off.
 */
export interface SyntheticEvent extends InboundRequest {
  event: NormalizedEvent;
  /**
   * Merge into the VerifyContext: a fetch that answers only the synthetic certificate / payment
   * URL (anything else is refused, so verification makes no network call) and the config naming
   * its origin (`paypalCertHostAllowList` / `mollieApiBaseUrl` on the reserved .invalid TLD).
   */
  providerStub?: { fetch: typeof fetch; config: Partial<PaymentProviderConfig>; detail: string };
}

export interface ProviderAdapter {
  readonly slug: ProviderSlug;
  /** Which ProviderSecrets fields install must require / may accept. */
  readonly secretFields: { required: ReadonlyArray<keyof ProviderSecrets>; optional: ReadonlyArray<keyof ProviderSecrets> };
  /**
   * Authenticates the delivery and maps it. Throws SignatureError (→ 400 invalid_signature),
   * PayloadError (authentic but unusable → 200, log failed) or ProviderUnavailableError (transient).
   */
  verifyAndParse(req: InboundRequest, ctx: VerifyContext): Promise<NormalizedEvent>;
  /** Async: PayPal's generates an RSA key. Throws SignatureError not_configured without the secrets it signs with. */
  synthesizeTestEvent(secrets: ProviderSecrets, opts?: { now?: Date }): Promise<SyntheticEvent>;
}
