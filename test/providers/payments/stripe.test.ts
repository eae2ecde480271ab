import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { PayloadError } from '../../../shared/providers/payments/errors';
import { stripeAdapter, stripeExponent } from '../../../shared/providers/payments/stripe';
import type { NormalizedEvent, VerifyContext } from '../../../shared/providers/payments/types';
import { signTimestampedHmac } from '../../../shared/providers/payments/util';
import { needsOfficialFiles } from '../../helpers/officialFiles';
import { stripePaymentEvent } from '../../helpers/providerEvents';
import { expectSignatureError, fixtureBytes, fixtureJson, providerFixtures, stripeInvoicePaymentPaidEvent, testConfig, unix } from './support';

/** Stripe's published objects in event envelopes (FIXTURES_DIR/providers/stripe): the mapping tests parse them. */
const official = needsOfficialFiles(
  providerFixtures(
    'stripe/invoice.payment_succeeded.json',
    'stripe/invoice.payment_failed.json',
    'stripe/charge.refunded.json',
    'stripe/source-objects/fixtures3.event.json',
  ),
);

const SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuv';
const NOW = new Date('2026-03-02T10:00:00Z');
const stripe = new Stripe('sk_test_x');

const ctx = (over: Partial<VerifyContext> = {}): VerifyContext => ({ secrets: { webhookSecret: SECRET }, config: testConfig(), now: NOW, ...over });
const signed = (body: Buffer | string, t = unix(NOW), secret = SECRET) => ({
  rawBody: Buffer.from(body),
  headers: { 'stripe-signature': signTimestampedHmac(secret, body, t), 'content-type': 'application/json' },
});

describe('stripe: mapping the fixture events', () => {
  it.skipIf(!official)('invoice.payment_succeeded → payment keyed by the invoice id', async () => {
    const event = await stripeAdapter.verifyAndParse(signed(fixtureBytes('stripe/invoice.payment_succeeded.json')), ctx());
    expect(event).toEqual<NormalizedEvent>({
      provider: 'stripe',
      eventId: 'evt_1FixtureInvPaySucceeded01',
      eventType: 'invoice.payment_succeeded',
      kind: 'payment',
      externalId: 'in_1Pgc6tB7WZ01zgkWu9fdqL6I',
      amount: '10.00', // amount_paid 1000 cents
      currency: 'USD',
      date: '2009-02-13', // status_transitions.paid_at 1234567890
      occurredAt: '2009-02-13T23:31:30.000Z',
      counterparty: { name: null, email: null, merchantId: 'cus_QXg1o8vcGmoR32', country: null, vatId: null, iban: null },
      description: 'My First Invoice Item (created for API docs)',
      reference: null,
    });
  });

  it.skipIf(!official)('invoice.payment_failed → failure with the amount that was due', async () => {
    const event = await stripeAdapter.verifyAndParse(signed(fixtureBytes('stripe/invoice.payment_failed.json')), ctx());
    expect(event).toEqual<NormalizedEvent>({
      provider: 'stripe',
      eventId: 'evt_1FixtureInvPayFailed0001',
      eventType: 'invoice.payment_failed',
      kind: 'failure',
      externalId: 'in_1Pgc6tB7WZ01zgkWu9fdqL6I',
      amount: '10.00', // amount_due; amount_paid is 0
      currency: 'USD',
      date: '2009-02-13', // event.created: a failed invoice has no paid_at
      occurredAt: '2009-02-13T23:31:30.000Z',
      counterparty: { name: null, email: null, merchantId: 'cus_QXg1o8vcGmoR32', country: null, vatId: null, iban: null },
      description: 'My First Invoice Item (created for API docs)',
      reference: null,
    });
  });

  it.skipIf(!official)(
    'charge.refunded → refund keyed by the re_ id; no charge.invoice in this API version, so the original is named by its charge (and payment intent)',
    async () => {
      const event = await stripeAdapter.verifyAndParse(signed(fixtureBytes('stripe/charge.refunded.json')), ctx());
      expect(event).toEqual<NormalizedEvent>({
        provider: 'stripe',
        eventId: 'evt_1FixtureChargeRefunded01',
        eventType: 'charge.refunded',
        kind: 'refund',
        externalId: 're_1Pgc72B7WZ01zgkWqPvrRrPE',
        originalExternalId: null,
        originalRefs: ['ch_1PgafuB7WZ01zgkWXYmPNZs8'], // payment_intent is null in the fixture
        amount: '1.00',
        currency: 'USD',
        date: '2009-02-13',
        occurredAt: '2009-02-13T23:31:30.000Z',
        counterparty: { name: 'Jenny Rosen', email: null, merchantId: null, country: null, vatId: null, iban: null },
        description: 'My First Test Charge (created for API docs)',
        reference: null,
      });
    },
  );

  it.skipIf(!official)('charge.refunded of an invoice charge (older API versions) links to the in_ id', async () => {
    const body = fixtureJson('stripe/charge.refunded.json');
    body.data.object.invoice = 'in_1Pgc6tB7WZ01zgkWu9fdqL6I';
    const event = await stripeAdapter.verifyAndParse(signed(JSON.stringify(body)), ctx());
    expect(event.originalExternalId).toBe('in_1Pgc6tB7WZ01zgkWu9fdqL6I');
    expect(event.externalId).toBe('re_1Pgc72B7WZ01zgkWqPvrRrPE');
  });

  it.skipIf(!official)('charge.refunded of a PaymentIntent charge (current shape) names the payment intent and the charge', async () => {
    const body = fixtureJson('stripe/charge.refunded.json');
    expect(body.data.object).not.toHaveProperty('invoice');
    body.data.object.payment_intent = 'pi_3PgafuB7WZ01zgkW1abcdEFG';
    const event = await stripeAdapter.verifyAndParse(signed(JSON.stringify(body)), ctx());
    expect(event).toMatchObject({ originalExternalId: null, originalRefs: ['pi_3PgafuB7WZ01zgkW1abcdEFG', 'ch_1PgafuB7WZ01zgkWXYmPNZs8'] });
    // Expanded objects count by their id.
    body.data.object.payment_intent = { id: 'pi_expanded', object: 'payment_intent' };
    expect((await stripeAdapter.verifyAndParse(signed(JSON.stringify(body)), ctx())).originalRefs).toEqual(['pi_expanded', 'ch_1PgafuB7WZ01zgkWXYmPNZs8']);
  });

  it('invoice_payment.paid (current API) books nothing but carries the PaymentIntent of the invoice', async () => {
    const paid = stripeInvoicePaymentPaidEvent({ invoiceId: 'in_1Pgc6tB7WZ01zgkWu9fdqL6I', paymentIntent: 'pi_3Abc', eventId: 'evt_inpay_1' });
    expect(await stripeAdapter.verifyAndParse(signed(JSON.stringify(paid)), ctx())).toEqual<NormalizedEvent>({
      provider: 'stripe',
      eventId: 'evt_inpay_1',
      eventType: 'invoice_payment.paid',
      kind: 'ignored',
      externalId: null,
      amount: null,
      currency: null,
      date: null,
      counterparty: {},
      paymentRefs: { externalId: 'in_1Pgc6tB7WZ01zgkWu9fdqL6I', refs: ['pi_3Abc'] },
    });
    // A charge without a PaymentIntent (type charge) names the charge; an open one nothing yet.
    const byCharge = stripeInvoicePaymentPaidEvent({ invoiceId: 'in_x', charge: 'ch_9' });
    expect((await stripeAdapter.verifyAndParse(signed(JSON.stringify(byCharge)), ctx())).paymentRefs).toEqual({ externalId: 'in_x', refs: ['ch_9'] });
    const open = stripeInvoicePaymentPaidEvent({ invoiceId: 'in_x', paymentIntent: 'pi_1', status: 'open' });
    expect((await stripeAdapter.verifyAndParse(signed(JSON.stringify(open)), ctx())).paymentRefs).toBeUndefined();
  });

  it.skipIf(!official)("invoice.payment_succeeded carries the invoice's payment intent / charge when the payload has them", async () => {
    const current = await stripeAdapter.verifyAndParse(signed(fixtureBytes('stripe/invoice.payment_succeeded.json')), ctx());
    expect(current.paymentRefs).toBeUndefined(); // the current shape has neither (payments is includable only)
    const body = fixtureJson('stripe/invoice.payment_succeeded.json');
    Object.assign(body.data.object, { charge: 'ch_old', payment_intent: 'pi_old' }); // API versions before basil
    expect((await stripeAdapter.verifyAndParse(signed(JSON.stringify(body)), ctx())).paymentRefs).toEqual({
      externalId: 'in_1Pgc6tB7WZ01zgkWu9fdqL6I',
      refs: ['pi_old', 'ch_old'],
    });
    delete body.data.object.charge;
    delete body.data.object.payment_intent;
    body.data.object.payments = {
      object: 'list',
      data: [stripeInvoicePaymentPaidEvent({ invoiceId: body.data.object.id, paymentIntent: 'pi_incl' }).data.object],
      has_more: false,
    };
    expect((await stripeAdapter.verifyAndParse(signed(JSON.stringify(body)), ctx())).paymentRefs).toEqual({
      externalId: 'in_1Pgc6tB7WZ01zgkWu9fdqL6I',
      refs: ['pi_incl'],
    });
  });

  it.skipIf(!official)('charge.refunded with several refunds takes the newest live one and its own amount', async () => {
    const body = fixtureJson('stripe/charge.refunded.json');
    const charge = body.data.object;
    const old = charge.refunds.data[0];
    charge.amount = 1000;
    charge.amount_refunded = 700;
    charge.refunds.data = [
      { ...old, id: 're_failed', amount: 999, created: 1234569999, status: 'failed' },
      { ...old, id: 're_newest', amount: 300, created: 1234568000 },
      { ...old, id: 're_oldest', amount: 400, created: 1234567890 },
    ];
    const event = await stripeAdapter.verifyAndParse(signed(JSON.stringify(body)), ctx());
    expect(event.externalId).toBe('re_newest');
    expect(event.amount).toBe('3.00');
    expect(event.date).toBe('2009-02-13');
  });

  it.skipIf(!official)('charge.refunded without the refunds list (API ≥ 2022-11-15) uses previous_attributes for the amount', async () => {
    const body = fixtureJson('stripe/charge.refunded.json');
    delete body.data.object.refunds;
    body.data.object.amount = 5000;
    body.data.object.amount_refunded = 3000;
    body.data.previous_attributes = { amount_refunded: 1000, refunded: false };
    const event = await stripeAdapter.verifyAndParse(signed(JSON.stringify(body)), ctx());
    expect(event.kind).toBe('refund');
    expect(event.externalId).toBe('ch_1PgafuB7WZ01zgkWXYmPNZs8:refunded:3000');
    expect(event.amount).toBe('20.00');
  });

  it('customer name, e-mail, EU VAT id, country and Connect account are mapped when present', async () => {
    const body: Record<string, any> = stripePaymentEvent();
    body.account = 'acct_1Connected';
    Object.assign(body.data.object, {
      customer_email: 'billing@lieferant.at',
      customer_name: 'Lieferant GmbH',
      customer_address: { ...body.data.object.customer_address, country: 'AT' },
      customer_tax_ids: [{ type: 'eu_vat', value: 'ATU12345678' }],
      number: 'F-2026-0042',
      description: 'Hosting März',
    });
    const event = await stripeAdapter.verifyAndParse(signed(JSON.stringify(body)), ctx());
    expect(event.counterparty).toEqual({
      name: 'Lieferant GmbH',
      email: 'billing@lieferant.at',
      merchantId: 'acct_1Connected',
      country: 'AT',
      vatId: 'ATU12345678',
      iban: null,
    });
    expect(event.reference).toBe('F-2026-0042');
    expect(event.description).toBe('Hosting März');
  });

  it("zero-decimal currencies are not divided (JPY), Stripe's ISK stays two-decimal", async () => {
    const body = stripePaymentEvent();
    body.data.object.currency = 'jpy';
    body.data.object.amount_paid = 500;
    expect((await stripeAdapter.verifyAndParse(signed(JSON.stringify(body)), ctx())).amount).toBe('500.00');
    body.data.object.currency = 'isk';
    body.data.object.amount_paid = 10000;
    const isk = await stripeAdapter.verifyAndParse(signed(JSON.stringify(body)), ctx());
    expect([isk.amount, isk.currency]).toEqual(['100.00', 'ISK']);
    expect(stripeExponent('mga')).toBe(0);
    expect(stripeExponent('kwd')).toBe(3);
  });

  it('an invoice paid with nothing (credit, 100 % discount) is ignored', async () => {
    const body = stripePaymentEvent();
    body.data.object.amount_paid = 0;
    const event = await stripeAdapter.verifyAndParse(signed(JSON.stringify(body)), ctx());
    expect(event.kind).toBe('ignored');
    expect(event.amount).toBe('0.00');
  });

  it.skipIf(!official)('other event types are ignored, with no money fields', async () => {
    const event = await stripeAdapter.verifyAndParse(signed(fixtureBytes('stripe/source-objects/fixtures3.event.json')), ctx());
    expect(event).toEqual({
      provider: 'stripe',
      eventId: 'evt_1Pgc76B7WZ01zgkWwyRHS12y',
      eventType: 'plan.created',
      kind: 'ignored',
      externalId: null,
      amount: null,
      currency: null,
      date: null,
      counterparty: {},
    });
  });

  it('a correctly signed body that is not JSON is a PayloadError, not a signature error', async () => {
    await expect(stripeAdapter.verifyAndParse(signed('not json'), ctx())).rejects.toBeInstanceOf(PayloadError);
    await expect(stripeAdapter.verifyAndParse(signed('{"id":"x"}'), ctx())).rejects.toThrow(/not a Stripe event/);
  });

  it.skipIf(!official)('a PayloadError names the event it came from when the body got that far (for the failed log row)', async () => {
    const body = fixtureJson('stripe/invoice.payment_succeeded.json');
    body.data.object.currency = 'not-a-currency';
    const err = await stripeAdapter.verifyAndParse(signed(JSON.stringify(body)), ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PayloadError);
    expect(err).toMatchObject({ eventId: 'evt_1FixtureInvPaySucceeded01', eventType: 'invoice.payment_succeeded' });
  });
});

describe('stripe: signature', () => {
  // Our own event, pretty-printed as Stripe sends it.
  const body = Buffer.from(JSON.stringify(stripePaymentEvent({ eventId: 'evt_test_signature', invoiceId: 'in_test_signature', amount: 1000 }), null, 2));

  it('accepts a header made by the official stripe SDK', async () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload: body.toString('utf8'), secret: SECRET, timestamp: unix(NOW) });
    const event = await stripeAdapter.verifyAndParse({ rawBody: body, headers: { 'stripe-signature': header } }, ctx());
    expect(event.externalId).toBe('in_test_signature');
  });

  it('produces headers the official stripe SDK accepts', () => {
    const t = unix(new Date());
    const header = signTimestampedHmac(SECRET, body, t);
    const evt = stripe.webhooks.constructEvent(body, header, SECRET);
    expect(evt.id).toBe('evt_test_signature');
  });

  it('rejects a tampered body', async () => {
    const req = signed(body);
    req.rawBody = Buffer.from(body.toString('utf8').replace('"amount_paid": 1000', '"amount_paid": 9000'));
    expect(req.rawBody.equals(body)).toBe(false);
    await expectSignatureError(stripeAdapter.verifyAndParse(req, ctx()), 'mismatch');
  });

  it('rejects a wrong secret', async () => {
    await expectSignatureError(stripeAdapter.verifyAndParse(signed(body, unix(NOW), 'whsec_other'), ctx()), 'mismatch');
  });

  it('tolerates 300 s either way and rejects beyond', async () => {
    await expect(stripeAdapter.verifyAndParse(signed(body, unix(NOW) - 300), ctx())).resolves.toMatchObject({ kind: 'payment' });
    await expect(stripeAdapter.verifyAndParse(signed(body, unix(NOW) + 300), ctx())).resolves.toMatchObject({ kind: 'payment' });
    await expectSignatureError(stripeAdapter.verifyAndParse(signed(body, unix(NOW) - 301), ctx()), 'timestamp_out_of_tolerance');
    await expectSignatureError(stripeAdapter.verifyAndParse(signed(body, unix(NOW) + 301), ctx()), 'timestamp_out_of_tolerance');
  });

  it('an SDK-signed header from an hour ago is stale', async () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload: body.toString('utf8'), secret: SECRET, timestamp: unix(NOW) - 3600 });
    await expectSignatureError(stripeAdapter.verifyAndParse({ rawBody: body, headers: { 'stripe-signature': header } }, ctx()), 'timestamp_out_of_tolerance');
  });

  it('any of several v1 signatures may match (secret roll); v0 never counts', async () => {
    const t = unix(NOW);
    const good = signTimestampedHmac(SECRET, body, t).split(',')[1]; // v1=…
    const bad = signTimestampedHmac('whsec_old', body, t).split(',')[1];
    const ok = await stripeAdapter.verifyAndParse({ rawBody: body, headers: { 'stripe-signature': `t=${t},${bad},${good},v0=abc` } }, ctx());
    expect(ok.eventId).toBe('evt_test_signature');
    const v0Only = `t=${t},${bad},${good.replace('v1=', 'v0=')}`;
    await expectSignatureError(stripeAdapter.verifyAndParse({ rawBody: body, headers: { 'stripe-signature': v0Only } }, ctx()), 'mismatch');
  });

  it('finds the header in any letter case', async () => {
    const req = signed(body);
    const event = await stripeAdapter.verifyAndParse({ rawBody: body, headers: { 'Stripe-Signature': req.headers['stripe-signature'] } }, ctx());
    expect(event.kind).toBe('payment');
  });

  it('rejects a missing or garbled header', async () => {
    const t = unix(NOW);
    const v1 = signTimestampedHmac(SECRET, body, t).split(',')[1];
    await expectSignatureError(stripeAdapter.verifyAndParse({ rawBody: body, headers: {} }, ctx()), 'missing_header');
    await expectSignatureError(stripeAdapter.verifyAndParse({ rawBody: body, headers: { 'stripe-signature': '' } }, ctx()), 'missing_header');
    for (const garbled of ['garbage', `t=abc,${v1}`, v1, `t=${t}`, `t=${t},t=${t},${v1}`, `t=${t},,${v1}`]) {
      await expectSignatureError(stripeAdapter.verifyAndParse({ rawBody: body, headers: { 'stripe-signature': garbled } }, ctx()), 'malformed_header');
    }
    await expectSignatureError(
      stripeAdapter.verifyAndParse({ rawBody: body, headers: { 'stripe-signature': [`t=${t},${v1}`, `t=${t},${v1}`] } }, ctx()),
      'malformed_header',
    );
    await expectSignatureError(
      stripeAdapter.verifyAndParse({ rawBody: body, headers: { 'stripe-signature': `t=${t},v1=zz${'0'.repeat(62)}` } }, ctx()),
      'mismatch',
    );
  });

  it('refuses to verify without a configured secret', async () => {
    await expectSignatureError(stripeAdapter.verifyAndParse(signed(body), ctx({ secrets: {} })), 'not_configured');
  });
});
