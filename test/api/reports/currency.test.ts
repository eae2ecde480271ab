import Decimal from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createCustomer, createIncomingInvoice, createSentInvoice, createSupplier, recordPayment } from '../../helpers/invoiceFactory';
import { germanBook, smallAustrianBook } from './books';

/**
 * Reports are in EUR: a foreign-currency document counts at the exchange rate it stores. One
 * without a rate (written before invoices stored one) makes a report whose selection contains it
 * answer 422 FOREIGN_CURRENCY naming it — never a sum that treats dollars as euros
 * (docs/reports.md "Currency").
 */
let server: Awaited<ReturnType<typeof startTestServer>>;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const usdItem = { description: 'SaaS subscription', quantity: '1', unitPrice: '100.00', taxRate: '20' };

/** A document as stored before invoices had an exchange rate. */
const withoutRate = (id: string) => db()('invoices').where({ id }).update({ exchangeRate: null, exchangeRateDate: null, exchangeRateSource: null });

describe('foreign-currency documents in the report period', () => {
  it('a USD incoming invoice in March without a rate: U30 json/xml, DATEV, BWA and the submission are 422 naming it; April is unaffected', async () => {
    const team = await smallAustrianBook();
    const supplier = await createSupplier(team.tenant, { name: 'US Cloud Inc.' });
    const incoming = await createIncomingInvoice(team.tenant, null, {
      supplierId: supplier.id,
      invoiceNumber: 'in_USD_42',
      invoiceDate: '2026-03-12',
      currency: 'USD',
      exchangeRate: { rate: '1.0900', date: '2026-03-12', source: 'manual' },
      items: [usdItem],
    });
    await withoutRate(incoming.id);
    const http = client(server.url, { token: team.admin.token });

    for (const path of [
      '/api/reports/ust?year=2026&month=3',
      '/api/reports/ust?year=2026&month=3&format=xml',
      '/api/reports/ust?year=2026&quarter=1',
      '/api/reports/datev?year=2026&month=3',
      '/api/reports/bwa?year=2026',
    ]) {
      const res = await http.get(path);
      expect(res.status, path).toBe(422);
      expect(res.body.error.code, path).toBe('UNPROCESSABLE');
      expect(res.body.error.reason, path).toBe('FOREIGN_CURRENCY');
      expect(res.body.error.message, path).toContain('incoming invoice in_USD_42 of 2026-03-12 in USD');
      expect(res.body.error.documents, path).toEqual([
        { id: expect.any(String), type: 'eingangsrechnung', number: 'in_USD_42', date: '2026-03-12', currency: 'USD' },
      ]);
    }
    // The BWA of the next year compares with 2026, so it is refused too.
    expect((await http.get('/api/reports/bwa?year=2027')).status).toBe(422);
    // Without the check, March's input tax would have been 20.00 "EUR" too much; April has no foreign document.
    const april = await http.get('/api/reports/ust?year=2026&month=4');
    expect(april.status).toBe(200);
    expect((await http.get('/api/reports/datev?year=2026&month=4')).status).toBe(200);

    await http.put('/api/settings', { portalCredentials: { tid: '123456789012', benid: 'WEBSRV01', pin: 'secret-pin', herstellerid: 'ATU12345678' } });
    const submit = await http.post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'test' });
    expect(submit.status).toBe(422);
    expect(submit.body.error.reason).toBe('FOREIGN_CURRENCY');
    expect(await db()('reportSubmissions').where({ tenantId: team.tenant.id })).toHaveLength(0);
  });

  it('a USD sales invoice without a rate, and DATEV for a month that only holds a payment on one, name the invoice number', async () => {
    const team = await smallAustrianBook();
    // country US: without it the customer would be read as Austrian (the tenant's country), and a
    // USD invoice to an Austrian business needs its UID (§ 11 Abs. 1 Z 3 lit. j UStG, checked at send).
    const customer = await createCustomer(team.tenant, { name: 'US Customer', company: 'Acme Corp', country: 'US' });
    const inv = await createSentInvoice(team.tenant, null, {
      customerId: customer.id,
      currency: 'USD',
      items: [usdItem],
      exchangeRate: { rate: '1.0900', date: '2026-03-12', source: 'manual' },
    });
    await db()('invoices').where({ id: inv.id }).update({ issueDate: '2026-05-20', dueDate: '2026-05-20' });
    await withoutRate(inv.id);
    await recordPayment(team.tenant, null, inv.id, { amount: '50.00', date: '2026-06-03' });
    const http = client(server.url, { token: team.viewer.token });

    const may = await http.get('/api/reports/ust?year=2026&month=5');
    expect(may.status).toBe(422);
    expect(may.body.error.message).toContain(`invoice ${inv.number} of 2026-05-20 in USD`);
    // June: no sale, but DATEV books the payment, which is in USD too.
    expect((await http.get('/api/reports/ust?year=2026&month=6')).status).toBe(200);
    const june = await http.get('/api/reports/datev?year=2026&month=6');
    expect(june.status).toBe(422);
    expect(june.body.error.documents).toEqual([expect.objectContaining({ number: inv.number, currency: 'USD', date: '2026-06-03' })]);
  });

  it('German tenants: the ELSTER UStVA is refused as well', async () => {
    const team = await germanBook();
    const chf = await createIncomingInvoice(team.tenant, null, {
      invoiceNumber: 'CHF-7',
      invoiceDate: '2026-03-20',
      currency: 'CHF',
      exchangeRate: { rate: '0.9600', date: '2026-03-20', source: 'manual' },
      items: [{ ...usdItem, taxRate: '19' }],
    });
    await withoutRate(chf.id);
    const res = await client(server.url, { token: team.viewer.token }).get('/api/reports/elster?year=2026&month=3');
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain('incoming invoice CHF-7 of 2026-03-20 in CHF');
  });

  it('documents with their stored rate count in EUR: U30, ELSTER, DATEV and BWA answer, converted at that rate', async () => {
    const team = await smallAustrianBook();
    const http = client(server.url, { token: team.admin.token });
    const before = (await http.get('/api/reports/ust?year=2026&month=3')).body;
    const supplier = await createSupplier(team.tenant, { name: 'US Cloud Inc.' });
    await createIncomingInvoice(team.tenant, null, {
      supplierId: supplier.id,
      invoiceNumber: 'in_USD_43',
      invoiceDate: '2026-03-12',
      currency: 'USD',
      exchangeRate: { rate: '1.0900', date: '2026-03-12', source: 'manual' },
      items: [usdItem],
    });
    const march = await http.get('/api/reports/ust?year=2026&month=3');
    expect(march.status).toBe(200);
    // USD 20.00 input tax at 1.09 USD per EUR = EUR 18.35 (half-up to the cent).
    expect(new Decimal(march.body.inputTax).minus(before.inputTax).toFixed(2)).toBe('18.35');
    for (const path of ['/api/reports/ust?year=2026&month=3&format=xml', '/api/reports/datev?year=2026&month=3', '/api/reports/bwa?year=2026']) {
      expect((await http.get(path)).status, path).toBe(200);
    }

    const de = await germanBook();
    await createIncomingInvoice(de.tenant, null, {
      invoiceNumber: 'CHF-8',
      invoiceDate: '2026-03-20',
      currency: 'CHF',
      exchangeRate: { rate: '0.9600', date: '2026-03-20', source: 'manual' },
      items: [{ ...usdItem, taxRate: '19' }],
    });
    expect((await client(server.url, { token: de.viewer.token }).get('/api/reports/elster?year=2026&month=3')).status).toBe(200);
  });
});
