import type { ProviderSlug } from './types';

/** Why a delivery was not accepted as authentic; goes to logs, never to the caller's response. */
export type SignatureFailure =
  | 'not_configured' // the installation lacks the secret needed to verify
  | 'missing_header'
  | 'malformed_header'
  | 'malformed_body' // Mollie: not `id=<id>`
  | 'timestamp_out_of_tolerance'
  | 'mismatch' // signature does not match body and secret
  | 'unsupported_algorithm'
  | 'untrusted_cert_url' // PayPal certificate URL not on the allow-list
  | 'invalid_certificate' // unreadable, expired or not yet valid, or not RSA
  | 'unknown_object' // Mollie: the API does not know this payment
  | 'rejected_api_key'; // Mollie: the API refused the tenant's key

/** The delivery is not authentic: 400 invalid_signature, log row invalid_signature. */
export class SignatureError extends Error {
  readonly code = 'invalid_signature';
  constructor(
    public readonly provider: ProviderSlug,
    public readonly reason: SignatureFailure,
    message: string,
  ) {
    super(`${provider}: ${message}`);
    this.name = 'SignatureError';
  }
}

/**
 * The delivery is authentic but cannot be used (not JSON, an amount with more decimals than its
 * currency has, a required id missing). Retrying cannot help, so ingest logs it failed and answers
 * 200: a 4xx would only make the provider redeliver the same bytes for days.
 * eventId/eventType name the provider event for the log row when the body got that far.
 */
export class PayloadError extends Error {
  readonly code = 'invalid_payload';
  eventId: string | null = null;
  eventType: string | null = null;
  constructor(
    public readonly provider: ProviderSlug,
    message: string,
  ) {
    super(`${provider}: ${message}`);
    this.name = 'PayloadError';
  }
}

/**
 * Verification needs the provider and the provider did not answer usefully (network error,
 * timeout, 5xx, 429). Transient: the pipeline retries with backoff, or answers 503 so that the
 * provider redelivers.
 */
export class ProviderUnavailableError extends Error {
  readonly code = 'provider_unavailable';
  /** Seconds the provider asked us to wait (Retry-After), when it said. */
  readonly retryAfterSec?: number;
  constructor(
    public readonly provider: ProviderSlug,
    message: string,
    options?: { cause?: unknown; retryAfterSec?: number },
  ) {
    super(`${provider}: ${message}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProviderUnavailableError';
    this.retryAfterSec = options?.retryAfterSec;
  }
}
