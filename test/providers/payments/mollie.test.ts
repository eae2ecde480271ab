import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProviderUnavailableError } from '../../../shared/providers/payments/errors';
import { mollieAdapter } from '../../../shared/providers/payments/mollie';
import type { NormalizedEvent, VerifyContext } from '../../../shared/providers/payments/types';
import { startFakeMollie, type FakeMollie } from '../../helpers/fakeMollie';
import { needsOfficialFiles } from '../../helpers/officialFiles';
import { molliePaymentBody, mollieRefundBody } from '../../helpers/providerEvents';
import { expectSignatureError, fixtureJson, providerFixtures, testConfig } from './support';

/** The API answers from Mollie's own SDK tests (FIXTURES_DIR/providers/mollie): the mapping tests parse them. */
const official = needsOfficialFiles(providerFixtures('mollie/payment.paid.json', 'mollie/refund.json', 'mollie/refund.sdk-fake-2026.json'));

let mollie: FakeMollie;
beforeAll(async () => {
  mollie = await startFakeMollie();
});
afterAll(() => mollie.close());

const paymentFixture = () => fixtureJson('mollie/payment.paid.json');
const refundFixture = () => fixtureJson('mollie/refund.json');
const webhook = (id: string, headers: Record<string, string> = {}) => ({
  rawBody: Buffer.from(`id=${id}`),
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
});

let seq = 0;
/** A paid payment of our own (20.00 EUR) with a fresh id per test, so seeded state never leaks between tests. */
function seedPayment(over: Record<string, unknown> = {}): string {
  const id = `tr_t${++seq}x${Date.now().toString(36)}`;
  mollie.setPayment(molliePaymentBody({ id, ...over }));
  return id;
}

const ctx = (over: Partial<VerifyContext> = {}): VerifyContext => ({
  secrets: { apiKey: mollie.apiKey },
  // Generous: a loaded CI machine must not turn a first request into a timeout; the slow-API test sets its own.
  config: testConfig({ mollieApiBaseUrl: mollie.baseUrl, providerHttpTimeoutMs: 10_000 }),
  ...over,
});

beforeEach(() => mollie.reset());

const T_TEST = { name: 'T. TEST', email: null, merchantId: null, iban: 'NL17RABO0213698412', country: 'NL', vatId: null };

describe('mollie: the API answer decides the event', () => {
  it.skipIf(!official)('paid (fixture tr_44aKxzEbr8) → payment.paid, fetched with the bearer key', async () => {
    mollie.setPayment(paymentFixture());
    const event = await mollieAdapter.verifyAndParse(webhook('tr_44aKxzEbr8'), ctx());
    expect(event).toEqual<NormalizedEvent>({
      provider: 'mollie',
      eventId: 'tr_44aKxzEbr8:paid',
      eventType: 'payment.paid',
      kind: 'payment',
      externalId: 'tr_44aKxzEbr8',
      amount: '20.00',
      currency: 'EUR',
      date: '2018-03-19',
      occurredAt: '2018-03-19T12:18:35.000Z',
      counterparty: T_TEST,
      description: 'My first API payment',
      reference: '1234',
    });
    expect(mollie.requests).toEqual([{ path: '/v2/payments/tr_44aKxzEbr8?embed=refunds', authorization: `Bearer ${mollie.apiKey}` }]);
  });

  it.each([
    ['expired', 'expiredAt'],
    ['failed', 'failedAt'],
    ['canceled', 'canceledAt'],
  ])('%s → payment.expired (failure), dated by %s', async (status, field) => {
    const id = seedPayment({ status, paidAt: undefined, [field]: '2018-03-20T08:00:00+01:00' });
    const event = await mollieAdapter.verifyAndParse(webhook(id), ctx());
    expect(event).toMatchObject({
      eventId: `${id}:${status}`,
      eventType: 'payment.expired',
      kind: 'failure',
      externalId: id,
      amount: '20.00',
      currency: 'EUR',
      date: '2018-03-20',
      occurredAt: '2018-03-20T07:00:00.000Z',
    });
  });

  it('open or pending payments are ignored', async () => {
    const id = seedPayment({ status: 'open', paidAt: undefined });
    const event = await mollieAdapter.verifyAndParse(webhook(id), ctx());
    expect([event.eventId, event.eventType, event.kind, event.externalId, event.amount]).toEqual([`${id}:open`, 'payment.open', 'ignored', null, null]);
  });

  it.skipIf(!official)('a paid payment with a refund → refund.created for the refund; the payment goes to related', async () => {
    mollie.setPayment(paymentFixture());
    mollie.addRefund('tr_44aKxzEbr8', refundFixture());
    const event = await mollieAdapter.verifyAndParse(webhook('tr_44aKxzEbr8'), ctx());
    const { related, ...refund } = event;
    expect(refund).toEqual({
      provider: 'mollie',
      eventId: 'tr_44aKxzEbr8:refund:re_PsAvxvLsnm',
      eventType: 'refund.created',
      kind: 'refund',
      externalId: 're_PsAvxvLsnm',
      originalExternalId: 'tr_44aKxzEbr8',
      amount: '20.00', // positive; the pipeline negates
      currency: 'EUR',
      date: '2018-03-19',
      occurredAt: '2018-03-19T12:33:37.000Z',
      counterparty: T_TEST,
      description: 'My first API payment',
      reference: '1234',
    });
    expect(related?.map((e) => [e.eventId, e.kind, e.externalId, e.amount])).toEqual([['tr_44aKxzEbr8:paid', 'payment', 'tr_44aKxzEbr8', '20.00']]);
  });

  it.skipIf(!official)('several refunds: the newest is the event, older ones follow the payment in related (oldest first)', async () => {
    const id = seedPayment({ amount: { value: '100.00', currency: 'EUR' } });
    const fake2026 = fixtureJson('mollie/refund.sdk-fake-2026.json'); // metadata as a JSON string, mode live
    mollie.addRefund(id, { ...fake2026, id: 're_second', paymentId: id, createdAt: '2023-03-14T17:09:02.0Z' });
    mollie.addRefund(id, { ...refundFixture(), id: 're_first', paymentId: id, amount: { value: '10.00', currency: 'EUR' } });
    mollie.addRefund(id, { ...refundFixture(), id: 're_dead', paymentId: id, status: 'canceled', createdAt: '2024-01-01T00:00:00+00:00' });
    const event = await mollieAdapter.verifyAndParse(webhook(id), ctx());
    expect([event.externalId, event.amount, event.date, event.description]).toEqual(['re_second', '5.95', '2023-03-14', 'Order']);
    expect(event.related?.map((e) => e.externalId)).toEqual([id, 're_first']);
    expect(event.related?.[1]).toMatchObject({ kind: 'refund', amount: '10.00', originalExternalId: id, eventId: `${id}:refund:re_first` });
  });

  it('only failed/canceled refunds → still payment.paid', async () => {
    const id = seedPayment();
    mollie.addRefund(id, mollieRefundBody(id, { id: 're_x', status: 'failed' }));
    const event = await mollieAdapter.verifyAndParse(webhook(id), ctx());
    expect([event.eventType, event.externalId, event.related]).toEqual(['payment.paid', id, undefined]);
  });

  it('without the embed, refunded money triggers a GET on /refunds', async () => {
    const id = seedPayment({ amountRefunded: { value: '20.00', currency: 'EUR' }, amountRemaining: { value: '0.00', currency: 'EUR' } });
    mollie.addRefund(id, mollieRefundBody(id, { id: 're_noEmbed' }));
    mollie.embedSupported = false;
    const event = await mollieAdapter.verifyAndParse(webhook(id), ctx());
    expect(event.externalId).toBe('re_noEmbed');
    expect(mollie.requests.map((r) => r.path)).toEqual([`/v2/payments/${id}?embed=refunds`, `/v2/payments/${id}/refunds?limit=250`]);
  });
});

/** A paid payment of our own (../../helpers/providerEvents) for the verification checks. */
const PAID = 'tr_testPaid44';

describe('mollie: verification failures', () => {
  it('a payment the API does not know → invalid signature', async () => {
    await expectSignatureError(mollieAdapter.verifyAndParse(webhook('tr_doesNotExist'), ctx()), 'unknown_object');
  });

  it('a wrong API key → invalid signature (rejected_api_key), not a retry', async () => {
    mollie.setPayment(molliePaymentBody({ id: PAID }));
    await expectSignatureError(mollieAdapter.verifyAndParse(webhook(PAID), ctx({ secrets: { apiKey: 'test_wrong' } })), 'rejected_api_key');
    expect(mollie.requests[0].authorization).toBe('Bearer test_wrong');
  });

  it.each([500, 502, 503, 429])('API answering %i → ProviderUnavailableError (transient)', async (status) => {
    mollie.setPayment(molliePaymentBody({ id: PAID }));
    mollie.failWith = status;
    await expect(mollieAdapter.verifyAndParse(webhook(PAID), ctx())).rejects.toBeInstanceOf(ProviderUnavailableError);
  });

  it('a slow API (beyond the timeout) → ProviderUnavailableError', async () => {
    mollie.setPayment(molliePaymentBody({ id: PAID }));
    // The fake answers 200 after 5 s: only the 300 ms client timeout can make this reject.
    mollie.delayMs = 5000;
    const fast = ctx({ config: testConfig({ mollieApiBaseUrl: mollie.baseUrl, providerHttpTimeoutMs: 300 }) });
    const err = await mollieAdapter.verifyAndParse(webhook(PAID), fast).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect((err as Error).message).toMatch(/TimeoutError/);
  });

  it('an unreachable API → ProviderUnavailableError', async () => {
    const err = await mollieAdapter.verifyAndParse(webhook(PAID), ctx({ config: testConfig({ mollieApiBaseUrl: 'http://127.0.0.1:9' }) })).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect((err as ProviderUnavailableError).code).toBe('provider_unavailable');
  });

  it('a body that is not id=<id> is refused without an API call; ids of other resources are ignored', async () => {
    for (const body of ['', 'foo=bar', 'id=', 'id=tr_a&id=tr_b', 'id=../../v2/methods', 'id=tr_abc%2F..%2Fx']) {
      await expectSignatureError(mollieAdapter.verifyAndParse({ rawBody: Buffer.from(body), headers: {} }, ctx()), 'malformed_body');
    }
    const ignored = await mollieAdapter.verifyAndParse(webhook('ord_pbjz8x'), ctx());
    expect([ignored.kind, ignored.eventId, ignored.externalId]).toEqual(['ignored', 'ord_pbjz8x:unsupported', null]);
    expect(mollie.requests).toEqual([]);
  });

  it('no API key configured → not_configured', async () => {
    await expectSignatureError(mollieAdapter.verifyAndParse(webhook(PAID), ctx({ secrets: {} })), 'not_configured');
  });
});

describe('mollie: optional X-Mollie-Signature', () => {
  const SIGNING = 'mollie_signing_secret_123';
  const sig = (body: string, secret = SIGNING) => createHmac('sha256', secret).update(body).digest('hex');

  it("with a signing secret configured, a valid sha256= header passes (bare hex too, as Mollie's SDK allows)", async () => {
    mollie.setPayment(molliePaymentBody({ id: PAID }));
    const c = ctx({ secrets: { apiKey: mollie.apiKey, signingSecret: SIGNING } });
    expect((await mollieAdapter.verifyAndParse(webhook(PAID, { 'x-mollie-signature': `sha256=${sig(`id=${PAID}`)}` }), c)).kind).toBe('payment');
    expect((await mollieAdapter.verifyAndParse(webhook(PAID, { 'X-Mollie-Signature': sig(`id=${PAID}`) }), c)).kind).toBe('payment');
  });

  it('missing, wrong or garbled signature is refused before any API call', async () => {
    const c = ctx({ secrets: { apiKey: mollie.apiKey, signingSecret: SIGNING } });
    await expectSignatureError(mollieAdapter.verifyAndParse(webhook(PAID), c), 'missing_header');
    await expectSignatureError(mollieAdapter.verifyAndParse(webhook(PAID, { 'x-mollie-signature': `sha256=${sig(`id=${PAID}`, 'other')}` }), c), 'mismatch');
    await expectSignatureError(mollieAdapter.verifyAndParse(webhook(PAID, { 'x-mollie-signature': `sha256=${sig('id=tr_other')}` }), c), 'mismatch');
    await expectSignatureError(mollieAdapter.verifyAndParse(webhook(PAID, { 'x-mollie-signature': 'sha256=xyz' }), c), 'malformed_header');
    expect(mollie.requests).toEqual([]);
  });

  it('without a signing secret the header is not needed', async () => {
    mollie.setPayment(molliePaymentBody({ id: PAID }));
    expect((await mollieAdapter.verifyAndParse(webhook(PAID), ctx())).externalId).toBe(PAID);
  });
});
