import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import Decimal from 'decimal.js';
import { db } from '../../../shared/db';
import { runInTransaction } from '../../../shared/outbox';
import { postIncomingInvoice } from '../../../shared/ledger/posting';
import { CHARTS } from '../../../shared/domain/charts';
import { DATEV_CHARTS } from '../../../shared/domain/tax/datevMapping';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createIncomingInvoice, createSupplier, recordPayment } from '../../helpers/invoiceFactory';
import { smallAustrianBook } from './books';
import { datevBookings, datevHeader } from '../../helpers/datevCsv';
import { bookEvent, normalizedPayment } from '../../helpers/normalizedEvents';

/**
 * The DATEV export and the BWA book an incoming invoice on the expense account the general ledger
 * uses (posted journal line first, else connector setting → supplier default → the ledger chart's
 * default); accounts that do not fit the batch's Sachkontenlänge are refused before streaming;
 * the DATEV settings accept exactly what the EXTF header accepts.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const item = (unitPrice: string, taxRate = '20') => ({ description: 'Aufwand', quantity: '1', unitPrice, taxRate });

async function post(
  tenantId: string,
  invoice: { id: string; supplierId?: string | null; invoiceDate?: string | null; totalGross: string; invoiceNumber?: string | null },
  expenseAccount?: string,
) {
  return runInTransaction((trx) =>
    postIncomingInvoice(
      trx,
      {
        id: invoice.id,
        tenantId,
        supplierId: invoice.supplierId!,
        invoiceDate: invoice.invoiceDate!,
        totalGross: invoice.totalGross,
        invoiceNumber: invoice.invoiceNumber!,
      },
      'stripe',
      { expenseAccount: expenseAccount ?? null },
      `Stripe ${invoice.invoiceNumber}`,
    ),
  );
}

async function installConnector(tenantId: string, provider: string, settings: Record<string, unknown>) {
  await db()('connectorInstallations').insert({
    tenantId,
    provider,
    tokenHash: randomUUID(),
    tokenEnc: 'x',
    secretsEnc: 'x',
    settings: JSON.stringify(settings),
    active: true,
  });
}

describe('expense accounts: DATEV and BWA agree with the general ledger', () => {
  it('the default is the ledger chart default (one source of truth)', () => {
    expect(DATEV_CHARTS.EKR.expense).toBe(CHARTS.EKR.defaultExpense);
    expect(DATEV_CHARTS.SKR03.expense).toBe(CHARTS.SKR03.defaultExpense);
  });

  it('posted → the journal line; connector invoice → its expenseAccount; else supplier default; else 7890', async () => {
    const team = await smallAustrianBook();
    const t = team.tenant;
    const office = await createSupplier(t, { name: 'Büro & Co' });
    await db()('suppliers').where({ id: office.id }).update({ defaultExpenseAccount: '7600' });
    const plain = await createSupplier(t, { name: 'Diverses KG' });
    // Posted with the connector's account 7650, although the supplier says 7600: the ledger wins.
    const posted = await createIncomingInvoice(t, null, {
      supplierId: office.id,
      invoiceNumber: 'POSTED-1',
      invoiceDate: '2026-03-05',
      items: [item('100.00')],
    });
    const entry = await post(t.id, posted, '7650');
    expect(entry).toMatchObject({ debitAccount: '7650' });
    // From PayPal, not posted (auto-post off): the connector's expenseAccount wins over the supplier's.
    await installConnector(t.id, 'paypal', { autoPost: false, expenseAccount: '7380' });
    await createIncomingInvoice(t, null, {
      supplierId: office.id,
      invoiceNumber: 'PAYPAL-1',
      invoiceDate: '2026-03-06',
      items: [item('200.00')],
      source: 'paypal',
      externalId: 'CAP-1',
    });
    await createIncomingInvoice(t, null, { supplierId: office.id, invoiceNumber: 'SUPPLIER-1', invoiceDate: '2026-03-07', items: [item('300.00')] });
    await createIncomingInvoice(t, null, { supplierId: plain.id, invoiceNumber: 'DEFAULT-1', invoiceDate: '2026-03-08', items: [item('400.00')] });

    const http = client(server.url, { token: team.viewer.token });
    const res = await http.get('/api/reports/datev?year=2026&month=3');
    expect(res.status).toBe(200);
    const byDoc = Object.fromEntries(
      datevBookings(res.raw)
        .filter((r) => r[6] === '3300')
        .map((r) => [r[10], r[7]]),
    );
    expect(byDoc).toEqual({ 'POSTED-1': '7650', 'PAYPAL-1': '7380', 'SUPPLIER-1': '7600', 'DEFAULT-1': '7890' });
    // The posted invoice's row is the ledger's debit line.
    const line = await db()('journalLines as jl')
      .join('ledgerAccounts as a', 'a.id', 'jl.accountId')
      .where({ 'jl.entryId': entry!.entryId, 'jl.tenantId': t.id })
      .where('jl.debit', '>', 0)
      .first('a.number');
    expect(byDoc['POSTED-1']).toBe(line.number);

    const bwa = await http.get('/api/reports/bwa?year=2026');
    expect(bwa.status).toBe(200);
    expect(bwa.body.months[2].expenses.map((e: { group: string; current: string }) => [e.group, e.current])).toEqual([
      ['7380 Nachrichtenaufwand (Telefon, Internet)', '200.00'],
      ['7600 Büromaterial', '300.00'],
      ['7650 Werbeaufwand', '100.00'],
      ['7890 Übriger betrieblicher Aufwand', '400.00'],
    ]);
  });

  it('a ledger kept in another chart than the export (SKR03 ledger, SKR04 export) is not mixed in', async () => {
    const team = await createTeam({ country: 'DE', vatId: 'DE123456789', taxNumber: '9198011310010' });
    const s = await createSupplier(team.tenant, { name: 'Papier GmbH' });
    const inv = await createIncomingInvoice(team.tenant, null, {
      supplierId: s.id,
      invoiceNumber: 'SKR-1',
      invoiceDate: '2026-03-05',
      items: [item('100.00', '19')],
    });
    expect(await post(team.tenant.id, inv, '4930')).toMatchObject({ debitAccount: '4930' });
    const http = client(server.url, { token: team.viewer.token });
    const skr03 = datevBookings((await http.get('/api/reports/datev?year=2026&month=3')).raw);
    expect(skr03.map((r) => r[7])).toEqual(['4930']);
    await db()('tenants')
      .where({ id: team.tenant.id })
      .update({ settings: JSON.stringify({ datev: { chart: 'SKR04' } }) });
    const skr04 = datevBookings((await http.get('/api/reports/datev?year=2026&month=3')).raw);
    expect(skr04.map((r) => r[7])).toEqual(['6300']);
  });
});

describe('DATEV account length', () => {
  it('expense accounts that are not 4 digits are 422 before any byte, naming account, source and supplier', async () => {
    const team = await smallAustrianBook();
    const s = await createSupplier(team.tenant, { name: 'Langkonto AG' });
    await db()('suppliers').where({ id: s.id }).update({ defaultExpenseAccount: '78000' });
    await createIncomingInvoice(team.tenant, null, { supplierId: s.id, invoiceNumber: 'LONG-1', invoiceDate: '2026-03-05', items: [item('10.00')] });
    await installConnector(team.tenant.id, 'mollie', { expenseAccount: '760' });
    await createIncomingInvoice(team.tenant, null, {
      invoiceNumber: 'SHORT-1',
      invoiceDate: '2026-03-06',
      items: [item('10.00')],
      source: 'mollie',
      externalId: 'tr_1',
    });
    const http = client(server.url, { token: team.viewer.token });
    const res = await http.get('/api/reports/datev?year=2026&month=3');
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/json/);
    expect(res.body.error.reason).toBe('ACCOUNT_LENGTH');
    expect(res.body.error.message).toContain('Sachkontenlänge 4');
    expect(res.body.error.message).toContain(`"78000" from the supplier's defaultExpenseAccount (Langkonto AG), 1 invoice(s), e.g. LONG-1`);
    expect(res.body.error.message).toContain(`"760" from the connector's expenseAccount setting`);
    expect(res.body.error.accounts).toEqual(
      expect.arrayContaining([
        { account: '78000', source: 'supplier', invoices: 1 },
        { account: '760', source: 'connector', invoices: 1 },
      ]),
    );
    // Another month without those invoices exports normally.
    expect((await http.get('/api/reports/datev?year=2026&month=4')).status).toBe(200);
  });
});

describe('DATEV settings accept exactly what the export accepts', () => {
  it('Beraternummer 1001–9999999, Mandantennummer 1–99999, chart SKR03 | SKR04 | EKR', async () => {
    const team = await createTeam({ country: 'AT' });
    const admin = client(server.url, { token: team.admin.token });
    for (const consultantNumber of ['1000', '0', '0999', '01001', '10000000', '12a4']) {
      const res = await admin.put('/api/settings', { datev: { consultantNumber } });
      expect(res.status, consultantNumber).toBe(400);
      expect(res.body.error.details[0]).toEqual({
        field: 'datev.consultantNumber',
        message: 'must be a DATEV Beraternummer from 1001 to 9999999 (digits, no leading zero)',
      });
    }
    for (const clientNumber of ['0', '00', '01', '100000']) {
      const res = await admin.put('/api/settings', { datev: { clientNumber } });
      expect(res.status, clientNumber).toBe(400);
      expect(res.body.error.details[0].field).toBe('datev.clientNumber');
    }
    // Every boundary the settings accept also downloads (the header writer checks the same ranges).
    const pairs = [
      ['1001', '1'],
      ['1010', '99999'],
      ['1099', '10'],
      ['1100', '12345'],
      ['9999', '7'],
      ['10000', '1'],
      ['9999999', '99999'],
    ];
    for (const [consultantNumber, clientNumber] of pairs) {
      expect((await admin.put('/api/settings', { datev: { consultantNumber, clientNumber, chart: 'EKR' } })).status, consultantNumber).toBe(200);
      const res = await admin.get('/api/reports/datev?year=2026&month=3');
      expect(res.status, `${consultantNumber}/${clientNumber}`).toBe(200);
      const h = datevHeader(res.raw);
      expect([h[10], h[11], h[26]]).toEqual([consultantNumber, clientNumber, '']);
    }
    expect((await admin.get('/api/settings')).body.datev).toEqual({ consultantNumber: '9999999', clientNumber: '99999', chart: 'EKR' });
    expect((await admin.put('/api/settings', { datev: { chart: 'SKR07' } })).status).toBe(400);
  });
});

describe('DATEV money rows of payment providers agree with the general ledger', () => {
  /** Per account: debit − credit from DATEV rows (S/H refers to Konto, Gegenkonto takes the other side). */
  const datevBalances = (rows: string[][]) => {
    const b = new Map<string, Decimal>();
    const add = (a: string, v: Decimal) => b.set(a, (b.get(a) ?? new Decimal(0)).plus(v));
    for (const r of rows) {
      const amount = new Decimal(r[0].replace(',', '.'));
      add(r[6], r[1] === 'S' ? amount : amount.neg());
      add(r[7], r[1] === 'S' ? amount.neg() : amount);
    }
    return Object.fromEntries(
      [...b]
        .filter(([, v]) => !v.isZero())
        .map(([a, v]) => [a, v.toFixed(2)] as const)
        .sort(),
    );
  };
  const ledgerBalances = async (tenantId: string) => {
    const rows = await db()('journalLines as l')
      .join('ledgerAccounts as a', 'a.id', 'l.accountId')
      .where({ 'l.tenantId': tenantId })
      .groupBy('a.number')
      .select('a.number')
      .sum({ d: 'l.debit' })
      .sum({ c: 'l.credit' });
    return Object.fromEntries(
      (rows as unknown as Array<{ number: string; d: string; c: string }>)
        .map((r) => [r.number, new Decimal(r.d).minus(r.c)] as const)
        .filter(([, v]) => !v.isZero())
        .map(([a, v]) => [a, v.toFixed(2)] as const)
        .sort(),
    );
  };

  it('Stripe payment 10.00 and refund 4.00 (auto-posted): money on the clearing account 2891, Kreditoren 3300 balanced, same balances as the ledger', async () => {
    const team = await createTeam({ country: 'AT' });
    const supplier = await createSupplier(team.tenant, { name: 'Stripe Supplier' });
    const settings = { autoPost: true, defaultSupplierId: supplier.id };
    const pay = normalizedPayment({ amount: '10.00' });
    await bookEvent(team.tenant.id, pay, settings);
    await bookEvent(
      team.tenant.id,
      normalizedPayment({
        kind: 'refund',
        eventType: 'charge.refunded',
        externalId: `re_${randomUUID().slice(0, 8)}`,
        originalExternalId: pay.externalId,
        amount: '4.00',
        date: '2026-11-14',
        occurredAt: '2026-11-14T10:00:00Z',
      }),
      settings,
    );
    // The ledger (docs/ledger.md): 7890 D 10.00 / 2891 C 10.00; refund 2891 D 4.00 / 7890 C 4.00.
    expect(await ledgerBalances(team.tenant.id)).toEqual({ '2891': '-6.00', '7890': '6.00' });

    const res = await client(server.url, { token: team.viewer.token }).get('/api/reports/datev?year=2026&month=11');
    expect(res.status).toBe(200);
    const rows = datevBookings(res.raw);
    expect(rows.every((r) => r.length === 125)).toBe(true);
    expect(rows.map((r) => [r[0], r[1], r[6], r[7], r[8]].join('|')).sort()).toEqual(
      ['10,00|H|3300|7890|', '10,00|H|2891|3300|', '4,00|S|3300|7890|', '4,00|S|2891|3300|'].sort(),
    );
    expect(datevBalances(rows)).toEqual(await ledgerBalances(team.tenant.id));
  });

  it("not posted: the connector's clearingAccount, else the chart's account for the provider; a bank connector books on the bank; manual payments stay on the bank", async () => {
    const team = await createTeam({ country: 'AT' });
    const supplier = await createSupplier(team.tenant, { name: 'Provider supplier' });
    await installConnector(team.tenant.id, 'paypal', { autoPost: false, clearingAccount: '2890' });
    await bookEvent(team.tenant.id, normalizedPayment({ provider: 'paypal', eventType: 'PAYMENT.CAPTURE.COMPLETED', externalId: 'CAP-1', amount: '20.00' }), {
      defaultSupplierId: supplier.id,
    });
    await bookEvent(team.tenant.id, normalizedPayment({ provider: 'mollie', eventType: 'payment.paid', externalId: 'tr-1', amount: '30.00' }), {
      defaultSupplierId: supplier.id,
    });
    await bookEvent(team.tenant.id, normalizedPayment({ provider: 'bank', eventType: 'payment.booked', externalId: 'bank-1', amount: '40.00' }), {
      defaultSupplierId: supplier.id,
    });
    const manual = await createIncomingInvoice(team.tenant, null, {
      supplierId: supplier.id,
      invoiceNumber: 'HAND-1',
      invoiceDate: '2026-11-12',
      items: [item('50.00', '0')],
    });
    await recordPayment(team.tenant, null, manual.id, { amount: '50.00', date: '2026-11-13' });
    const rows = datevBookings((await client(server.url, { token: team.viewer.token }).get('/api/reports/datev?year=2026&month=11')).raw);
    const money = Object.fromEntries(rows.filter((r) => r[7] === '3300').map((r) => [r[10], `${r[0]}|${r[1]}|${r[6]}`]));
    expect(money).toEqual({ 'CAP-1': '20,00|H|2890', 'tr-1': '30,00|H|2893', 'bank-1': '40,00|H|2800', 'HAND-1': '50,00|H|2800' });
  });

  it('a clearing account that does not fit the Sachkontenlänge is 422 before any byte', async () => {
    const team = await createTeam({ country: 'AT' });
    const supplier = await createSupplier(team.tenant, { name: 'Provider supplier' });
    await installConnector(team.tenant.id, 'stripe', { autoPost: false, clearingAccount: '28910' });
    await bookEvent(team.tenant.id, normalizedPayment({ amount: '10.00' }), { defaultSupplierId: supplier.id });
    const res = await client(server.url, { token: team.viewer.token }).get('/api/reports/datev?year=2026&month=11');
    expect(res.status).toBe(422);
    expect(res.body.error.reason).toBe('ACCOUNT_LENGTH');
    expect(res.body.error.message).toContain(`"28910" from the connector's clearingAccount setting`);
  });
});
