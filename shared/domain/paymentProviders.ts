/**
 * The payment providers the service connects (docs/payment-providers.md). Pure: the charts of
 * accounts name a clearing account per provider, and the adapters in shared/providers/payments
 * (one per slug) re-export this type as part of their contract.
 */
export type ProviderSlug = 'stripe' | 'paypal' | 'mollie' | 'bank';
