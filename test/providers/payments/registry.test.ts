import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { X509Certificate } from 'node:crypto';
import {
  getAdapter,
  isProviderSlug,
  PROVIDER_SLUGS,
  SignatureError,
  type ProviderSecrets,
  type ProviderSlug,
  type SyntheticEvent,
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
  /** test-webhook's context: the synthetic provider side merged in, and a fetch that records every call. */
  const stubbed = (slug: ProviderSlug, synthetic: SyntheticEvent, secrets = SECRETS[slug]) => {
    const calls: string[] = [];
    const stub = synthetic.providerStub;
    const fetch = (async (url: string | URL | Request, init?: RequestInit) => {
      calls.push(String(url));
      if (!stub) throw new Error('no network');
      return stub.fetch(url, init);
    }) as typeof globalThis.fetch;
    return { calls, ctx: { secrets, config: { ...ctx(slug).config, ...stub?.config }, now, fetch } };
  };

  it.each(PROVIDER_SLUGS.map((s) => [s]))('%s: correctly signed, verifies to exactly the promised event through the real verification', async (slug) => {
    const synthetic = await getAdapter(slug).synthesizeTestEvent(SECRETS[slug], { now });
    const { event } = synthetic;
    expect(event).toMatchObject({ provider: slug, kind: 'payment', amount: '12.34', currency: 'EUR' });
    expect(event.externalId).toBeTruthy();
    const { calls, ctx: c } = stubbed(slug, synthetic);
    expect(await getAdapter(slug).verifyAndParse({ rawBody: synthetic.rawBody, headers: synthetic.headers }, c)).toEqual(event);
    // Only the in-memory provider side was asked: the certificate (paypal) or the payment (mollie).
    expect(calls.every((u) => new URL(u).hostname.endsWith('.invalid'))).toBe(true);
    expect(calls).toHaveLength(slug === 'paypal' || slug === 'mollie' ? 1 : 0);
  });

  it('stripe and bank: signed with the tenant secret; another secret does not verify it', async () => {
    for (const slug of ['stripe', 'bank'] as const) {
      const synthetic = await getAdapter(slug).synthesizeTestEvent(SECRETS[slug], { now });
      expect(synthetic.providerStub).toBeUndefined();
      await expectSignatureError(getAdapter(slug).verifyAndParse(synthetic, { ...ctx(slug), secrets: { webhookSecret: 'someone-else' } }), 'mismatch');
    }
  });

  it('stripe: the official SDK accepts the synthetic signature', async () => {
    const synthetic = await getAdapter('stripe').synthesizeTestEvent(SECRETS.stripe);
    const evt = new Stripe('sk_test_x').webhooks.constructEvent(
      synthetic.rawBody,
      String(synthetic.headers['stripe-signature']),
      SECRETS.stripe.webhookSecret!,
    );
    expect(evt.type).toBe('invoice.payment_succeeded');
    expect(evt.id).toBe(synthetic.event.eventId);
  });

  it('two synthetic events never share ids (test-webhook is not a duplicate of the previous one)', async () => {
    for (const slug of PROVIDER_SLUGS) {
      const a = (await getAdapter(slug).synthesizeTestEvent(SECRETS[slug])).event;
      const b = (await getAdapter(slug).synthesizeTestEvent(SECRETS[slug])).event;
      expect(a.eventId).not.toBe(b.eventId);
      expect(a.externalId).not.toBe(b.externalId);
    }
  });

  it('paypal: signed for the stored webhook id with a throwaway certificate only the stub serves', async () => {
    const synthetic = await getAdapter('paypal').synthesizeTestEvent(SECRETS.paypal, { now });
    expect(synthetic.event).toMatchObject({ eventType: 'PAYMENT.CAPTURE.COMPLETED', reference: 'TEST-0001' });
    expect(JSON.parse(synthetic.rawBody.toString()).resource.id).toBe(synthetic.event.externalId);
    const certUrl = String(synthetic.headers['paypal-cert-url']);
    const served = await synthetic.providerStub!.fetch(certUrl);
    const cert = new X509Certificate(await served.text());
    expect(cert.verify(cert.publicKey)).toBe(true); // self-signed
    expect(Date.parse(cert.validFrom)).toBeLessThanOrEqual(now.getTime());
    // A real delivery's context never trusts it: its origin is on no production allow-list.
    await expectSignatureError(getAdapter('paypal').verifyAndParse(synthetic, ctx('paypal')), 'untrusted_cert_url');
    // Another installation's webhook id does not verify it.
    const other = stubbed('paypal', synthetic, { webhookId: 'WH-OTHER' });
    await expectSignatureError(getAdapter('paypal').verifyAndParse(synthetic, other.ctx), 'mismatch');
    // The stub answers nothing else.
    await expect(synthetic.providerStub!.fetch('https://api.paypal.com/v1/notifications/certs/CERT-1')).rejects.toThrow(/no network/);
  });

  it('mollie: the stub API knows the payment for the stored key only; the stored signing secret signs it', async () => {
    const synthetic = await getAdapter('mollie').synthesizeTestEvent(SECRETS.mollie, { now });
    expect(synthetic.rawBody.toString()).toBe(`id=${synthetic.event.externalId}`);
    expect(synthetic.headers).not.toHaveProperty('x-mollie-signature');
    // The real Mollie (here the local fake) does not know it.
    await expectSignatureError(getAdapter('mollie').verifyAndParse(synthetic, ctx('mollie')), 'unknown_object');
    // Another key is refused by the stub as Mollie would.
    await expectSignatureError(getAdapter('mollie').verifyAndParse(synthetic, stubbed('mollie', synthetic, { apiKey: 'test_other' }).ctx), 'rejected_api_key');

    const withSecret = { ...SECRETS.mollie, signingSecret: 'mollie-signing-secret' };
    const signed = await getAdapter('mollie').synthesizeTestEvent(withSecret, { now });
    expect(String(signed.headers['x-mollie-signature'])).toMatch(/^sha256=[0-9a-f]{64}$/);
    await expect(getAdapter('mollie').verifyAndParse(signed, stubbed('mollie', signed, withSecret).ctx)).resolves.toEqual(signed.event);
    await expectSignatureError(
      getAdapter('mollie').verifyAndParse(signed, stubbed('mollie', signed, { ...withSecret, signingSecret: 'another' }).ctx),
      'mismatch',
    );
  });

  it('no provider synthesizes without the secret it signs or fetches with', async () => {
    for (const slug of PROVIDER_SLUGS) {
      const err = await getAdapter(slug)
        .synthesizeTestEvent({})
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SignatureError);
      expect((err as SignatureError).reason).toBe('not_configured');
    }
  });
});
