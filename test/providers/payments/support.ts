import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { DEFAULT_PAYMENT_PROVIDER_CONFIG, type PaymentProviderConfig } from '../../../shared/providers/payments/types';
import type { SignatureFailure } from '../../../shared/providers/payments/errors';
import { SignatureError } from '../../../shared/providers/payments/errors';
import { type OfficialFile, officialPath } from '../../helpers/officialFiles';

/**
 * The providers' published payloads: official files under FIXTURES_DIR/providers
 * (docs/official-files.md). A test file declares the ones it reads with
 * needsOfficialFiles(providerFixtures(...)) and skips those tests without them.
 */
export const providerFixtures = (...paths: string[]): OfficialFile[] => paths.map((p) => `fixtures:providers/${p}` as const);

/** Raw bytes of a provider fixture, exactly as published. */
export function fixtureBytes(path: string): Buffer {
  return readFileSync(officialPath(`fixtures:providers/${path}`));
}
export function fixtureJson<T = Record<string, any>>(path: string): T {
  return JSON.parse(fixtureBytes(path).toString('utf8')) as T;
}

export function testConfig(overrides: Partial<PaymentProviderConfig> = {}): PaymentProviderConfig {
  return {
    paypalCertHostAllowList: [...DEFAULT_PAYMENT_PROVIDER_CONFIG.paypalCertHostAllowList],
    mollieApiBaseUrl: 'http://127.0.0.1:9',
    providerHttpTimeoutMs: 2000,
    ...overrides,
  };
}

/** Asserts the promise rejects with a SignatureError for this exact reason. */
export async function expectSignatureError(p: Promise<unknown>, reason: SignatureFailure): Promise<SignatureError> {
  const err = await p.then(
    () => {
      throw new Error(`expected SignatureError(${reason}) but verification succeeded`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SignatureError);
  expect((err as SignatureError).reason).toBe(reason);
  expect((err as SignatureError).code).toBe('invalid_signature');
  return err as SignatureError;
}

export const unix = (d: Date) => Math.floor(d.getTime() / 1000);

/**
 * A Stripe invoice_payment.paid event (API 2025-03-31.basil and later) around an InvoicePayment
 * with exactly the fields of stripe-node 23's `InvoicePayment` type (no fixture of this object
 * exists in stripe/openapi's fixtures3.json): the only current event that says which
 * PaymentIntent paid which invoice. The envelope is Stripe's Event object (https://docs.stripe.com/api/events/object).
 */
export function stripeInvoicePaymentPaidEvent(over: {
  invoiceId: string;
  paymentIntent?: string | null;
  charge?: string | null;
  amount?: number;
  currency?: string;
  eventId?: string;
  status?: string;
}) {
  const created = 1234567890;
  const payment = over.paymentIntent ? { type: 'payment_intent', payment_intent: over.paymentIntent } : { type: 'charge', charge: over.charge ?? null };
  return {
    id: over.eventId ?? `evt_test_inpay_${Math.random().toString(36).slice(2, 12)}`,
    object: 'event',
    api_version: '2026-07-29.dahlia',
    created,
    data: {
      object: {
        id: `inpay_${Math.random().toString(36).slice(2, 12)}`,
        object: 'invoice_payment',
        amount_paid: over.amount ?? 1000,
        amount_requested: over.amount ?? 1000,
        created,
        currency: over.currency ?? 'usd',
        invoice: over.invoiceId,
        is_default: true,
        livemode: false,
        payment,
        status: over.status ?? 'paid',
        status_transitions: { canceled_at: null, paid_at: created },
      },
    },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: 'invoice_payment.paid',
  };
}
