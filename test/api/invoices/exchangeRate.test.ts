import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createSupplier } from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';
import { resetClock, setClock } from '../../../shared/clock';
import { storeExchangeRates } from '../../../shared/commands/exchangeRates';

/**
 * Foreign-currency invoices store the rate they are converted with (docs/exchange-rates.md): a
 * sales document the ECB rate of its issue date at finalize (the last published one on a weekend)
 * unless the user entered a rate, an incoming invoice the ECB rate of its invoice date at create.
 *
 * exchange_rates is shared by every test file: the rates here lie weeks before the other files'
 * days, and each test removes its own.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;
beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});
afterAll(async () => server.close());

// Monday 1 to Friday 5 June 2026; the 6th and 7th are a weekend. No other test file stores rates
// of these days (webhook events are of 12 November, the ECB worker test's feed of 18–20 November).
const RATES = [
  { currency: 'USD', date: '2026-06-01', rate: '1.0710' },
  { currency: 'USD', date: '2026-06-03', rate: '1.0742' },
  { currency: 'USD', date: '2026-06-04', rate: '1.0755' },
  { currency: 'USD', date: '2026-06-05', rate: '1.07810' },
];
const WEDNESDAY = '2026-06-03';
const SUNDAY = '2026-06-07';

async function withRates() {
  await db().transaction((trx) => storeExchangeRates({ trx }, RATES));
}
afterEach(async () => {
  resetClock();
  await db()('exchangeRates')
    .whereIn(
      ['currency', 'rateDate'],
      RATES.map((r) => [r.currency, r.date]),
    )
    .delete();
});
/** The clock at 10:00 Vienna time on `day`: send takes its issue date from it. */
const atDay = (day: string) => setClock(() => Date.parse(`${day}T09:00:00Z`));

const usdItem = { description: 'SaaS subscription', quantity: '1', unitPrice: '100.00', taxRate: '20' };

async function setup() {
  const team = await createTeam();
  // A business outside the EU: no UID rule depends on the (unconvertible) amount.
  const customer = await createCustomer(team.tenant, { name: 'US Customer', company: 'Acme Corp', country: 'US', email: 'ap@acme.example' });
  return { ...team, customer };
}

async function draft(token: string, body: Record<string, unknown>) {
  const res = await http.post('/api/invoices', { type: 'rechnung', items: [usdItem], currency: 'USD', ...body }, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}
const send = (id: string, token: string) => http.post(`/api/invoices/${id}/send`, { to: 'ap@acme.example' }, { token });

function expectInvalid(res: { status: number; body: any }, fields: string[], code = 'INVALID_INPUT') {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toBe(code);
  expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(fields);
}

describe('finalize: the ECB rate of the issue date', () => {
  it('a USD invoice sent on a Wednesday gets that day’s ECB rate, shown by the send and by GET', async () => {
    const { member, customer } = await setup();
    await withRates();
    const inv = await draft(member.token, { customerId: customer.id });
    expect(inv.exchangeRate).toBeNull();
    atDay(WEDNESDAY);
    const res = await send(inv.id, member.token);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.invoice).toMatchObject({ status: 'offen', issueDate: WEDNESDAY, exchangeRate: { rate: '1.0742', date: WEDNESDAY, source: 'ecb' } });
    const got = await http.get(`/api/invoices/${inv.id}`, { token: member.token });
    expect(got.body.exchangeRate).toEqual({ rate: '1.0742', date: WEDNESDAY, source: 'ecb' });
  });

  it('issued on a Sunday: Friday’s rate with Friday’s date (the ECB publishes none at weekends)', async () => {
    const { member, customer } = await setup();
    await withRates();
    const inv = await draft(member.token, { customerId: customer.id });
    atDay(SUNDAY);
    const res = await send(inv.id, member.token);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.invoice.issueDate).toBe(SUNDAY);
    expect(res.body.invoice.exchangeRate).toEqual({ rate: '1.0781', date: '2026-06-05', source: 'ecb' });
  });

  it('a manual rate (e.g. the BMF monthly average) is kept at send; finalized, the rate cannot be replaced', async () => {
    const { member, manager, customer } = await setup();
    await withRates();
    const manual = { rate: '1.0650', date: '2026-10-31', source: 'manual' };
    const inv = await draft(member.token, { customerId: customer.id, exchangeRate: manual });
    expect(inv.exchangeRate).toEqual({ rate: '1.065', date: '2026-10-31', source: 'manual' });
    atDay(WEDNESDAY);
    const res = await send(inv.id, member.token);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.invoice.exchangeRate).toEqual({ rate: '1.065', date: '2026-10-31', source: 'manual' });

    // The same rate sent back with a note is fine; another one is IMMUTABLE.
    expect((await http.put(`/api/invoices/${inv.id}`, { notes: 'Danke', exchangeRate: manual }, { token: manager.token })).status).toBe(200);
    const changed = await http.put(`/api/invoices/${inv.id}`, { exchangeRate: { ...manual, rate: '1.1' } }, { token: manager.token });
    expect(changed.status).toBe(400);
    expect(changed.body.error.code).toBe('IMMUTABLE');
    expect(changed.body.error.message).toContain('exchangeRate');
    const row = await db()('invoices').where({ id: inv.id }).first();
    expect([row.exchangeRate, row.exchangeRateSource]).toEqual(['1.065000', 'manual']);
  });

  it('no ECB rate within 7 days → 400 on exchangeRate and the draft is unchanged (no number taken); with a manual rate it goes through as number 00001', async () => {
    const { member, manager, customer } = await setup();
    const inv = await draft(member.token, { customerId: customer.id, currency: 'GBP' });
    atDay(WEDNESDAY);
    const res = await send(inv.id, member.token);
    expectInvalid(res, ['exchangeRate']);
    expect(res.body.error.details[0].message).toMatch(/no GBP rate for the issue date \(2026-06-03\).*enter the rate/);
    const row = await db()('invoices').where({ id: inv.id }).first();
    expect([row.status, row.number, row.exchangeRate, row.sellerSnapshot]).toEqual(['entwurf', null, null, null]);
    expect(await db()('deliveries').where({ invoiceId: inv.id })).toHaveLength(0);

    const put = await http.put(
      `/api/invoices/${inv.id}`,
      { customerId: customer.id, currency: 'GBP', items: [usdItem], exchangeRate: { rate: '0.8712', date: '2026-06-02', source: 'manual' } },
      { token: manager.token },
    );
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const ok = await send(inv.id, member.token);
    expect(ok.status, JSON.stringify(ok.body)).toBe(202);
    expect(ok.body.invoice).toMatchObject({ number: 'RE-2026-00001', exchangeRate: { rate: '0.8712', date: '2026-06-02', source: 'manual' } });
  });

  it('an EUR invoice has no rate', async () => {
    const { member, customer } = await setup();
    const inv = await draft(member.token, { customerId: customer.id, currency: 'EUR' });
    const res = await send(inv.id, member.token);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.invoice.exchangeRate).toBeNull();
  });
});

describe('bad input → 400 naming the field', () => {
  const base = { rate: '1.08', date: '2026-06-01', source: 'manual' };
  it.each([
    ['a negative rate', { ...base, rate: '-1.08' }, 'exchangeRate.rate'],
    ['a zero rate', { ...base, rate: '0' }, 'exchangeRate.rate'],
    ['a rate as a JSON number', { ...base, rate: 1.08 }, 'exchangeRate.rate'],
    ['more than 6 decimal places', { ...base, rate: '1.0800001' }, 'exchangeRate.rate'],
    ['a date in the future', { ...base, date: '2099-01-01' }, 'exchangeRate.date'],
    ['source ecb from a client', { ...base, source: 'ecb' }, 'exchangeRate.source'],
    ['no date', { rate: '1.08', source: 'manual' }, 'exchangeRate.date', 'MISSING_FIELD'],
  ])('%s, on create and on a draft’s update', async (_what, exchangeRate, field, code = 'INVALID_INPUT') => {
    const { member, manager, customer } = await setup();
    expectInvalid(
      await http.post('/api/invoices', { type: 'rechnung', customerId: customer.id, currency: 'USD', items: [usdItem], exchangeRate }, { token: member.token }),
      [field],
      code,
    );
    const inv = await draft(member.token, { customerId: customer.id });
    expectInvalid(
      await http.put(`/api/invoices/${inv.id}`, { customerId: customer.id, currency: 'USD', items: [usdItem], exchangeRate }, { token: manager.token }),
      [field],
      code,
    );
  });

  it('a rate on an EUR invoice', async () => {
    const { member, manager, customer } = await setup();
    const res = await http.post(
      '/api/invoices',
      { type: 'rechnung', customerId: customer.id, currency: 'EUR', items: [usdItem], exchangeRate: base },
      { token: member.token },
    );
    expectInvalid(res, ['exchangeRate']);
    expect(res.body.error.details[0].message).toMatch(/another currency than EUR/);
    // A USD draft changed to EUR must drop its rate.
    const inv = await draft(member.token, { customerId: customer.id, exchangeRate: base });
    expectInvalid(
      await http.put(`/api/invoices/${inv.id}`, { customerId: customer.id, currency: 'EUR', items: [usdItem], exchangeRate: base }, { token: manager.token }),
      ['exchangeRate'],
    );
  });
});

describe('documents that follow another', () => {
  it('the credit note of a cancelled USD invoice has the original’s rate', async () => {
    const { member, manager, customer } = await setup();
    await withRates();
    const inv = await draft(member.token, { customerId: customer.id });
    atDay(WEDNESDAY);
    expect((await send(inv.id, member.token)).status).toBe(202);
    atDay(SUNDAY);
    const res = await http.post(`/api/invoices/${inv.id}/cancel`, {}, { token: manager.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.creditNote).toMatchObject({ type: 'gutschrift', currency: 'USD', exchangeRate: { rate: '1.0742', date: WEDNESDAY, source: 'ecb' } });
    expect(res.body.invoice.exchangeRate).toEqual({ rate: '1.0742', date: WEDNESDAY, source: 'ecb' });
  });

  it('a quote converted to an invoice carries no rate: the invoice gets its own at send', async () => {
    const { member, customer } = await setup();
    await withRates();
    const quote = await draft(member.token, { type: 'angebot', customerId: customer.id, exchangeRate: { rate: '1.05', date: '2026-06-01', source: 'manual' } });
    const conv = await http.post(`/api/invoices/${quote.id}/convert`, {}, { token: member.token });
    expect(conv.status, JSON.stringify(conv.body)).toBe(201);
    expect(conv.body.exchangeRate).toBeNull();
    atDay(WEDNESDAY);
    const res = await send(conv.body.id, member.token);
    expect(res.body.invoice.exchangeRate).toEqual({ rate: '1.0742', date: WEDNESDAY, source: 'ecb' });
  });
});

describe('incoming invoices: the ECB rate of the invoice date at create', () => {
  async function incoming(token: string, tenant: { id: string }, body: Record<string, unknown>) {
    const supplier = await createSupplier(tenant, { name: 'US Cloud Inc.' });
    return http.post(
      '/api/invoices',
      { type: 'eingangsrechnung', supplierId: supplier.id, invoiceNumber: 'in_USD_42', currency: 'USD', items: [usdItem], ...body },
      { token },
    );
  }

  it('a USD incoming invoice of a Thursday gets that day’s rate; one dated Saturday gets Friday’s', async () => {
    const { member, tenant } = await setup();
    await withRates();
    const thu = await incoming(member.token, tenant, { invoiceDate: '2026-06-04' });
    expect(thu.status, JSON.stringify(thu.body)).toBe(201);
    expect(thu.body).toMatchObject({ status: 'offen', exchangeRate: { rate: '1.0755', date: '2026-06-04', source: 'ecb' } });
    const sat = await incoming(member.token, tenant, { invoiceDate: '2026-06-06', invoiceNumber: 'in_USD_43' });
    expect(sat.body.exchangeRate).toEqual({ rate: '1.0781', date: '2026-06-05', source: 'ecb' });
  });

  it('a manual rate is kept; with none and no ECB rate → 400 telling the user to enter it', async () => {
    const { member, tenant } = await setup();
    await withRates();
    const manual = await incoming(member.token, tenant, { invoiceDate: '2026-06-04', exchangeRate: { rate: '1.07', date: '2026-05-31', source: 'manual' } });
    expect(manual.status, JSON.stringify(manual.body)).toBe(201);
    expect(manual.body.exchangeRate).toEqual({ rate: '1.07', date: '2026-05-31', source: 'manual' });

    const none = await incoming(member.token, tenant, { invoiceDate: '2026-06-04', currency: 'CHF', invoiceNumber: 'CHF-7' });
    expectInvalid(none, ['exchangeRate']);
    expect(none.body.error.details[0].message).toMatch(/no CHF rate for the invoice date \(2026-06-04\).*enter the rate/);
    expect(await db()('invoices').where({ tenantId: tenant.id, invoiceNumber: 'CHF-7' })).toHaveLength(0);
  });
});

describe('the EUR limits of the invoice rules compare the converted gross', () => {
  it('a USD invoice to an Austrian business needs the customer UID only over EUR 10,000 at its rate (§ 11 Abs. 1 Z 3 lit. j UStG)', async () => {
    const team = await createTeam();
    const gmbh = await createCustomer(team.tenant, { name: 'Huber', company: 'Huber Bau GmbH', email: 'ap@huber.example' });
    const rate = { rate: '1.1000', date: '2026-06-01', source: 'manual' };
    // USD 6,000 + 20 % = USD 7,200 = EUR 6,545.45: under the limit, no UID needed.
    const small = await draft(team.member.token, { customerId: gmbh.id, items: [{ ...usdItem, unitPrice: '6000.00' }], exchangeRate: rate });
    expect((await send(small.id, team.member.token)).status).toBe(202);
    // USD 12,000 + 20 % = USD 14,400 = EUR 13,090.91: over it.
    const big = await draft(team.member.token, { customerId: gmbh.id, items: [{ ...usdItem, unitPrice: '12000.00' }], exchangeRate: rate });
    const refused = await send(big.id, team.member.token);
    expectInvalid(refused, ['customer.vatId']);
    expect(refused.body.error.details[0].message).toMatch(/13090\.91 EUR \(USD at 1\.1 per EUR\) is over EUR 10,000/);
  });
});
