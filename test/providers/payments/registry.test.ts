import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  getAdapter, isProviderSlug, PROVIDER_SLUGS, SignatureError, type ProviderSecrets, type ProviderSlug,
} from '../../../shared/providers/payments/index';
import { startFakeMollie, type FakeMollie } from '../../helpers/fakeMollie';
import { expectSignatureError, testConfig } from './support';

const SECRETS: Record<ProviderSlug, ProviderSecrets> = {
  stripe: { webhookSecret: 'whsec_synthetic_0123456789' },
  paypal: { webhookId: 'WH-ID-1' },
  mollie: { apiKey: 'test_fakeMollieKey000000000000000' },
  bank: { webhookSecret: 'bank_secret_synthetic' },
};

let mollie: FakeMollie;
beforeAll(async () => {
  mollie = await startFakeMollie({ apiKey: SECRETS.mollie.apiKey });
});
afterAll(() => mollie.close());

describe('registry', () => {
  it('has one adapter per slug', () => {
    expect([...PROVIDER_SLUGS].sort()).toEqual(['bank', 'mollie', 'paypal', 'stripe']);
    for (const slug of PROVIDER_SLUGS) expect(getAdapter(slug).slug).toBe(slug);
  });

  it('isProviderSlug accepts exactly the four slugs', () => {
    expect(['stripe', 'paypal', 'mollie', 'bank'].every(isProviderSlug)).toBe(true);
    for (const s of ['STRIPE', 'toString', '__proto__', 'constructor', '', 'adyen', null, 1]) expect(isProviderSlug(s)).toBe(false);
    expect(() => getAdapter('adyen' as ProviderSlug)).toThrow(RangeError);
  });

  it('declares the secrets install needs', () => {
    expect(getAdapter('stripe').secretFields).toEqual({ required: ['webhookSecret'], optional: [] });
    expect(getAdapter('paypal').secretFields).toEqual({ required: ['webhookId'], optional: [] });
    expect(getAdapter('mollie').secretFields).toEqual({ required: ['apiKey'], optional: ['signingSecret'] });
    expect(getAdapter('bank').secretFields).toEqual({ required: ['webhookSecret'], optional: [] });
  });
});

describe('synthetic test events', () => {
  const now = new Date();
  const ctx = (slug: ProviderSlug) => ({ secrets: SECRETS[slug], config: testConfig({ mollieApiBaseUrl: mollie.baseUrl }), now });

  it.each(['stripe', 'bank'] as const)('%s: signed with the tenant secret, verifies to exactly the promised event', async (slug) => {
    const synthetic = getAdapter(slug).synthesizeTestEvent(SECRETS[slug], { now });
    expect(synthetic.signed).toBe(true);
    const { event } = synthetic;
    expect(event).toMatchObject({ provider: slug, kind: 'payment', amount: '12.34', currency: 'EUR', date: now.toISOString().slice(0, 10) });
    expect(event.externalId).toBeTruthy();
    const verified = await getAdapter(slug).verifyAndParse({ rawBody: synthetic.rawBody, headers: synthetic.headers }, ctx(slug));
    expect(verified).toEqual(event);
    // Another tenant's secret does not verify it.
    await expectSignatureError(
      getAdapter(slug).verifyAndParse(synthetic, { ...ctx(slug), secrets: { webhookSecret: 'someone-else' } }),
      'mismatch',
    );
  });

  it('stripe: the official SDK accepts the synthetic signature', () => {
    const synthetic = getAdapter('stripe').synthesizeTestEvent(SECRETS.stripe);
    const evt = new Stripe('sk_test_x').webhooks.constructEvent(synthetic.rawBody, String(synthetic.headers['stripe-signature']), SECRETS.stripe.webhookSecret!);
    expect(evt.type).toBe('invoice.payment_succeeded');
    expect(evt.id).toBe(synthetic.event.eventId);
  });

  it('two synthetic events never share ids (test-webhook is not a duplicate of the previous one)', () => {
    const a = getAdapter('bank').synthesizeTestEvent(SECRETS.bank).event;
    const b = getAdapter('bank').synthesizeTestEvent(SECRETS.bank).event;
    expect(a.eventId).not.toBe(b.eventId);
    expect(a.externalId).not.toBe(b.externalId);
  });

  it('paypal: unsigned (no PayPal key), and verifyAndParse refuses it', async () => {
    const synthetic = getAdapter('paypal').synthesizeTestEvent(SECRETS.paypal, { now });
    expect(synthetic.signed).toBe(false);
    expect(synthetic.event).toMatchObject({ provider: 'paypal', eventType: 'PAYMENT.CAPTURE.COMPLETED', kind: 'payment', amount: '12.34', currency: 'EUR', reference: 'TEST-0001' });
    expect(synthetic.event.counterparty.merchantId).toBe('SYNTHETICMERCHANT');
    expect(JSON.parse(synthetic.rawBody.toString()).resource.id).toBe(synthetic.event.externalId);
    await expectSignatureError(getAdapter('paypal').verifyAndParse(synthetic, ctx('paypal')), 'missing_header');
  });

  it('mollie: unsigned (the API cannot know it), and verifyAndParse refuses it', async () => {
    const synthetic = getAdapter('mollie').synthesizeTestEvent(SECRETS.mollie, { now });
    expect(synthetic.signed).toBe(false);
    expect(synthetic.event).toMatchObject({ provider: 'mollie', eventType: 'payment.paid', kind: 'payment', amount: '12.34', currency: 'EUR', reference: 'TEST-0001' });
    expect(synthetic.rawBody.toString()).toBe(`id=${synthetic.event.externalId}`);
    await expectSignatureError(getAdapter('mollie').verifyAndParse(synthetic, ctx('mollie')), 'unknown_object');
  });

  it('stripe and bank cannot synthesize without a secret', () => {
    expect(() => getAdapter('stripe').synthesizeTestEvent({})).toThrow(SignatureError);
    expect(() => getAdapter('bank').synthesizeTestEvent({})).toThrow(/webhookSecret/);
  });
});
