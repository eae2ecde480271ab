/**
 * Payment-provider adapters: the only entry point the webhook pipeline, the connector routes and
 * test-webhook need. One adapter per provider; see types.ts for the contract and
 * docs/payment-providers.md for each provider's verification and mapping.
 */
import { bankAdapter } from './bank';
import { mollieAdapter } from './mollie';
import { paypalAdapter } from './paypal';
import { stripeAdapter } from './stripe';
import type { ProviderAdapter, ProviderSlug } from './types';

const ADAPTERS: Readonly<Record<ProviderSlug, ProviderAdapter>> = Object.freeze({
  stripe: stripeAdapter,
  paypal: paypalAdapter,
  mollie: mollieAdapter,
  bank: bankAdapter,
});

export const PROVIDER_SLUGS: readonly ProviderSlug[] = Object.freeze(Object.keys(ADAPTERS) as ProviderSlug[]);

export function isProviderSlug(s: unknown): s is ProviderSlug {
  return typeof s === 'string' && Object.hasOwn(ADAPTERS, s);
}

export function getAdapter(slug: ProviderSlug): ProviderAdapter {
  const adapter = isProviderSlug(slug) ? ADAPTERS[slug] : undefined;
  if (!adapter) throw new RangeError(`unknown payment provider ${JSON.stringify(slug)}`);
  return adapter;
}

export * from './types';
export { SignatureError, PayloadError, ProviderUnavailableError, type SignatureFailure } from './errors';
export { minorToDecimal, decimalToAmount, currencyExponent, amountPlaces, normalizeCurrency } from './currency';
export { signBankPayload } from './bank';
export { clearPaypalCertCache } from './paypal';
export { stripeAdapter, paypalAdapter, mollieAdapter, bankAdapter };
