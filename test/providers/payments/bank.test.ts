import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bankAdapter, signBankPayload } from '../../../shared/providers/payments/bank';
import { PayloadError } from '../../../shared/providers/payments/errors';
import type { NormalizedEvent, VerifyContext } from '../../../shared/providers/payments/types';
import { expectSignatureError, testConfig, unix } from './support';

const SECRET = 'bank_whsec_7f3a9c1e5b2d4f60';
const NOW = new Date('2026-03-02T10:00:00Z');
const ctx = (over: Partial<VerifyContext> = {}): VerifyContext => ({ secrets: { webhookSecret: SECRET }, config: testConfig(), now: NOW, ...over });

const completed = {
  id: 'evt_bank_01HZX3',
  type: 'payment_completed',
  createdAt: '2026-03-02T09:59:58Z',
  data: {
    payment_id: 'pay_8c21f0a4',
    amount: '1234.5',
    currency: 'eur',
    executedAt: '2026-03-01',
    counterparty: { name: 'Büro Huber OG', iban: 'AT61 1904 3002 3457 3201', email: 'office@huber.at', merchantId: 'HUBER-001' },
    reference: 'RE-2026-00017',
  },
};
const deliver = (payload: unknown, t = unix(NOW), secret = SECRET) => {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  return { rawBody: Buffer.from(body), headers: { 'x-bank-signature': signBankPayload(secret, body, t) } };
};

describe('bank', () => {
  it('payment_completed → payment keyed by data.payment_id', async () => {
    const event = await bankAdapter.verifyAndParse(deliver(completed), ctx());
    expect(event).toEqual<NormalizedEvent>({
      provider: 'bank',
      eventId: 'evt_bank_01HZX3',
      eventType: 'payment_completed',
      kind: 'payment',
      externalId: 'pay_8c21f0a4',
      amount: '1234.50',
      currency: 'EUR',
      date: '2026-03-01',
      occurredAt: null,
      counterparty: { name: 'Büro Huber OG', email: 'office@huber.at', merchantId: 'HUBER-001', iban: 'AT611904300234573201', country: null, vatId: null },
      description: 'RE-2026-00017',
      reference: 'RE-2026-00017',
    });
  });

  it('payment_failed → failure; unknown types → ignored', async () => {
    const failed = await bankAdapter.verifyAndParse(deliver({ ...completed, id: 'evt_2', type: 'payment_failed' }), ctx());
    expect([failed.kind, failed.externalId, failed.amount]).toEqual(['failure', 'pay_8c21f0a4', '1234.50']);
    const other = await bankAdapter.verifyAndParse(deliver({ ...completed, id: 'evt_3', type: 'account_updated' }), ctx());
    expect([other.kind, other.externalId, other.amount]).toEqual(['ignored', null, null]);
  });

  it('signBankPayload is t=<unix>,v1=HMAC-SHA256(`<t>.<body>`)', () => {
    const expected = createHmac('sha256', SECRET).update('1700000000.{"a":1}').digest('hex');
    expect(signBankPayload(SECRET, '{"a":1}', 1700000000)).toBe(`t=1700000000,v1=${expected}`);
  });

  it('rejects a tampered body and a wrong secret', async () => {
    const req = deliver(completed);
    req.rawBody = Buffer.from(req.rawBody.toString().replace('1234.5', '4321.5'));
    await expectSignatureError(bankAdapter.verifyAndParse(req, ctx()), 'mismatch');
    await expectSignatureError(bankAdapter.verifyAndParse(deliver(completed, unix(NOW), 'other'), ctx()), 'mismatch');
  });

  it('rejects stale and future timestamps beyond 300 s', async () => {
    await expectSignatureError(bankAdapter.verifyAndParse(deliver(completed, unix(NOW) - 301), ctx()), 'timestamp_out_of_tolerance');
    await expectSignatureError(bankAdapter.verifyAndParse(deliver(completed, unix(NOW) + 301), ctx()), 'timestamp_out_of_tolerance');
    await expect(bankAdapter.verifyAndParse(deliver(completed, unix(NOW) - 299), ctx())).resolves.toMatchObject({ kind: 'payment' });
  });

  it('rejects a missing or garbled header; accepts one of several v1', async () => {
    const { rawBody, headers } = deliver(completed);
    await expectSignatureError(bankAdapter.verifyAndParse({ rawBody, headers: {} }, ctx()), 'missing_header');
    await expectSignatureError(bankAdapter.verifyAndParse({ rawBody, headers: { 'x-bank-signature': 'v1=abc' } }, ctx()), 'malformed_header');
    const [t, v1] = headers['x-bank-signature'].split(',');
    const rolled = `${t},v1=${'0'.repeat(64)},${v1}`;
    await expect(bankAdapter.verifyAndParse({ rawBody, headers: { 'X-Bank-Signature': rolled } }, ctx())).resolves.toMatchObject({
      externalId: 'pay_8c21f0a4',
    });
  });

  it('authentic but unusable payloads are PayloadErrors', async () => {
    const bad = (data: Record<string, unknown>) => deliver({ ...completed, data: { ...completed.data, ...data } });
    await expect(bankAdapter.verifyAndParse(bad({ amount: '12.345' }), ctx())).rejects.toThrow(PayloadError);
    await expect(bankAdapter.verifyAndParse(bad({ amount: 12.34 }), ctx())).rejects.toThrow(PayloadError); // numbers are not money here
    await expect(bankAdapter.verifyAndParse(bad({ amount: '-5.00' }), ctx())).rejects.toThrow(/negative/);
    await expect(bankAdapter.verifyAndParse(bad({ executedAt: '2026-02-30' }), ctx())).rejects.toThrow(/executedAt/);
    await expect(bankAdapter.verifyAndParse(bad({ currency: 'EURO' }), ctx())).rejects.toThrow(/currency/);
    await expect(bankAdapter.verifyAndParse(bad({ payment_id: '' }), ctx())).rejects.toThrow(/payment_id/);
    await expect(bankAdapter.verifyAndParse(deliver('[1,2]'), ctx())).rejects.toThrow(/JSON object/);
  });

  it('without executedAt the date falls back to createdAt', async () => {
    const event = await bankAdapter.verifyAndParse(deliver({ ...completed, data: { ...completed.data, executedAt: undefined } }), ctx());
    expect([event.date, event.occurredAt]).toEqual(['2026-03-02', '2026-03-02T09:59:58.000Z']);
  });

  it('refuses to verify without a configured secret', async () => {
    await expectSignatureError(bankAdapter.verifyAndParse(deliver(completed), ctx({ secrets: {} })), 'not_configured');
  });
});
