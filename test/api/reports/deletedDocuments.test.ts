import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { cancelInvoice, createCustomer, createDraftInvoice, createIncomingInvoice, createSentInvoice, createSupplier } from '../../helpers/invoiceFactory';
import { datevBookings } from '../../helpers/datevCsv';

/**
 * A soft delete hides a document from the lists; a finalized document stays in the books
 * (BAO § 132, GoBD; shared/queries/reports/books.ts). Deleting a cancelled invoice used to drop it
 * from U30, UStVA, DATEV and BWA while its Storno credit note stayed, so the output tax was
 * understated by the reversed invoice's tax.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const item = (unitPrice: string, taxRate: string) => ({ description: `Leistung ${taxRate} %`, quantity: '1', unitPrice, taxRate });
const backdate = (id: string, date: string) => db()('invoices').where({ id }).update({ issueDate: date, dueDate: date });
const datevRows = (raw: Buffer) =>
  datevBookings(raw)
    .map((f) => [f[0], f[1], f[6], f[7], f[8], f[10]].join('|'))
    .sort();

describe('deleting a cancelled invoice leaves the books unchanged', () => {
  it('AT, 2026-11: U30 json and xml, DATEV and BWA are the same before and after DELETE of the cancelled RE-2', async () => {
    const team = await createTeam({ country: 'AT', taxNumber: '12-345/6789', address: 'Hauptstraße 1\n1010 Wien' });
    const t = team.tenant;
    const c = await createCustomer(t, { name: 'Kunde', company: 'Kunde GmbH' });
    const re1 = await createSentInvoice(t, null, { customerId: c.id, items: [item('100.00', '20'), item('50.00', '10'), item('33.33', '13')] });
    await backdate(re1.id, '2026-11-03');
    const re2 = await createSentInvoice(t, null, { customerId: c.id, items: [item('200.00', '20')] });
    await backdate(re2.id, '2026-11-05');
    const { creditNoteId } = await cancelInvoice(t, null, re2.id);
    await backdate(creditNoteId!, '2026-11-06');
    const gs1 = await createSentInvoice(t, null, { type: 'gutschrift', customerId: c.id, items: [item('40.00', '20')] });
    await backdate(gs1.id, '2026-11-10');
    const supplier = await createSupplier(t, { name: 'Lieferant' });
    await createIncomingInvoice(t, null, { supplierId: supplier.id, invoiceNumber: 'L-1', invoiceDate: '2026-11-12', items: [item('105.00', '20')] });
    // A deleted draft never counted and still does not.
    const draft = await createDraftInvoice(t, null, { customerId: c.id, items: [item('5000.00', '20')] });
    await backdate(draft.id, '2026-11-07');

    const viewer = client(server.url, { token: team.viewer.token });
    const manager = client(server.url, { token: team.manager.token });
    expect((await manager.delete(`/api/invoices/${draft.id}`)).status).toBe(204);
    const snapshot = async () => {
      const u30 = await viewer.get('/api/reports/ust?year=2026&month=11');
      const xml = await viewer.get('/api/reports/ust?year=2026&month=11&format=xml');
      const datev = await viewer.get('/api/reports/datev?year=2026&month=11');
      const bwa = await viewer.get('/api/reports/bwa?year=2026');
      for (const r of [u30, xml, datev, bwa]) expect(r.status).toBe(200);
      return {
        kennzahlen: u30.body.kennzahlen,
        payable: u30.body.payable,
        xml: String(xml.body).replace(/<DATUM_ERSTELLUNG[\s\S]*?<\/UHRZEIT_ERSTELLUNG>/, ''),
        datev: datevRows(datev.raw),
        bwa: { revenue: bwa.body.months[10].revenue, total: bwa.body.total.revenue, result: bwa.body.total.result },
      };
    };

    const before = await snapshot();
    // 022: 100 + 200 − 200 − 40 = 60.00; 000: 60 + 50 + 33.33 = 143.33;
    // 095: 12.00 + 5.00 + 4.33 (33.33 × 13 % = 4.3329) − 21.00 input tax = 0.33
    expect(before.kennzahlen).toMatchObject({ '000': '143.33', '022': '60.00', '029': '50.00', '006': '33.33', '060': '21.00', '095': '0.33' });
    expect(before.bwa.revenue.current).toBe('143.33');
    const gs = (await db()('invoices').where({ id: creditNoteId }).first('number')).number;
    expect(before.datev).toEqual(expect.arrayContaining([`240,00|S|2000|4000|3|${re2.number}`, `240,00|H|2000|4000|3|${gs}`]));

    const del = await manager.delete(`/api/invoices/${re2.id}`);
    expect(del.status).toBe(204);
    // Hidden from the user's lists …
    expect((await viewer.get(`/api/invoices/${re2.id}`)).status).toBe(404);
    const list = await viewer.get('/api/invoices?type=rechnung&limit=100');
    expect(list.body.data.map((i: { id: string }) => i.id)).not.toContain(re2.id);
    // … but still in the books, as is its credit note.
    expect(await snapshot()).toEqual(before);
  });

  it('DE: the UStVA figures are the same after the cancelled invoice is deleted', async () => {
    const team = await createTeam({ country: 'DE', vatId: 'DE123456789', taxNumber: '9198011310010' });
    const t = team.tenant;
    const c = await createCustomer(t, { name: 'Kunde', company: 'Kunde GmbH' });
    const kept = await createSentInvoice(t, null, { customerId: c.id, items: [item('100.00', '19')] });
    await backdate(kept.id, '2026-11-03');
    const cancelled = await createSentInvoice(t, null, { customerId: c.id, items: [item('300.00', '19')] });
    await backdate(cancelled.id, '2026-11-04');
    const { creditNoteId } = await cancelInvoice(t, null, cancelled.id);
    await backdate(creditNoteId!, '2026-11-05');
    const viewer = client(server.url, { token: team.viewer.token });
    const before = await viewer.get('/api/reports/ust?year=2026&month=11');
    expect(before.status).toBe(200);
    expect(before.body.kennzahlen).toMatchObject({ '81': '100', '83': '19.00' });
    expect((await client(server.url, { token: team.manager.token }).delete(`/api/invoices/${cancelled.id}`)).status).toBe(204);
    const after = await viewer.get('/api/reports/ust?year=2026&month=11');
    expect(after.body).toEqual(before.body);
  });
});
