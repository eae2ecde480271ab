import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import { db } from '../../../shared/db';
import { monthPeriod, quarterPeriod, type TaxPeriod } from '../../../shared/domain/tax/period';
import type { TaxCategory } from '../../../shared/domain/tax/vatCategory';
import { taxLine, type TaxLine } from '../../helpers/taxLines';
import { datevCsvStream, datevCsvTextStream, type DatevBooking } from '../../../shared/formats/datev/extfBuchungsstapel';
import { DATEV_LINES_PER_PIECE, datevBookings, datevExportChunks, datevExportStream, datevMeta } from '../../../shared/queries/reports/datev';
import { loadReportTenant } from '../../../shared/queries/reports/vatReturn';
import { createTeam } from '../../helpers/factories';
import { client } from '../../helpers/http';
import { startTestServer } from '../../helpers/server';
import { cancelInvoice, createCustomer, createIncomingInvoice, createSentInvoice, createSupplier, recordPayment } from '../../helpers/invoiceFactory';
import { referenceDatevBookings } from '../../helpers/datevReference';

/**
 * The export's text path (datevExportChunks + datevCsvTextStream: cached postings, cent-rounded
 * amounts from SQL, the 0 % split as a subquery of the 0 % rows, Latin-1 where Windows-1252
 * agrees) writes the same bytes as the booking objects through datevPosting and datevBookingLine
 * (datevBookings + datevCsvStream), and the same lines as the export before issue 31
 * (test/helpers/datevReference.ts; as a multiset: its order of one invoice's rows was the sort's).
 * Over a book with every VAT category, legacy lines, several rates on one invoice, credit notes,
 * payments on both, service periods, incoming invoices (reverse charge, ig. Erwerb, foreign VAT,
 * supplier and chart expense accounts), foreign currency, and text Windows-1252 maps (ä, €, „“),
 * cannot hold (中 → ?) or must clean (quotes, line breaks, tabs).
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const line = taxLine;
type Tenant = { id: string };

async function sale(t: Tenant, customerId: string, items: TaxLine[], date: string, extra: Record<string, unknown> = {}) {
  const inv = await createSentInvoice(t, undefined, { customerId, items, ...extra });
  await db()('invoices').where({ id: inv.id }).update({ issueDate: date, dueDate: date });
  return inv;
}

async function purchase(t: Tenant, supplierId: string, date: string, items: TaxLine[], category?: TaxCategory, extra: Record<string, unknown> = {}) {
  const inv = await createIncomingInvoice(t, undefined, { supplierId, invoiceDate: date, items, ...extra });
  if (category) await db()('invoiceItems').where({ invoiceId: inv.id }).update({ taxCategory: category });
  return inv;
}

const FIXED = new Date('2026-04-01T10:00:00Z');
const bytesOf = async (stream: AsyncIterable<unknown>) => {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

/** The three paths' files for one tenant and period (header at a fixed time). */
async function files(tenantId: string, period: TaxPeriod) {
  const tenant = await loadReportTenant(db(), tenantId);
  const meta = datevMeta(tenant, period, FIXED);
  const streamed = await bytesOf(datevCsvTextStream(meta, datevExportChunks(tenant, period)));
  // The route's stream (checks while the first chunks are read ahead) writes the same bytes.
  expect((await bytesOf(await datevExportStream(tenant, period, db(), FIXED))).equals(streamed)).toBe(true);
  const objects = await bytesOf(datevCsvStream(meta, datevBookings(tenant, period)));
  const before = await bytesOf(datevCsvStream(meta, referenceDatevBookings(tenant, period) as AsyncIterable<DatevBooking[]>));
  return { streamed, objects, before };
}

const lines = (bytes: Buffer) => iconv.decode(bytes, 'windows-1252').split('\r\n');

async function expectSame(tenantId: string, period: TaxPeriod, minBookings: number) {
  const { streamed, objects, before } = await files(tenantId, period);
  expect(streamed.equals(objects)).toBe(true);
  expect(lines(streamed).length - 3).toBeGreaterThanOrEqual(minBookings);
  expect(lines(streamed).slice(0, 2)).toEqual(lines(before).slice(0, 2));
  expect(lines(streamed).slice(2).sort()).toEqual(lines(before).slice(2).sort());
  return streamed;
}

describe('DATEV: the streamed text path writes what the booking objects and the previous export write', () => {
  it('DE (SKR03): every category, legacy lines, credit notes, payments, service periods, special characters', async () => {
    const team = await createTeam({ country: 'DE', vatId: 'DE123456789', taxNumber: '9198011310010', address: 'Musterstraße 1\n10115 Berlin' });
    const t = team.tenant;
    const home = await createCustomer(t, { name: 'Müller & Söhne', company: 'Müller „Bau“ GmbH € "Nord"', country: 'DE' });
    const fr = await createCustomer(t, { name: 'FR Kunde', company: 'Client SARL', country: 'FR', vatId: 'FR40303265045' });
    const ch = await createCustomer(t, { name: 'CH Kunde', company: 'Kunde\tAG\nZürich 中文', country: 'CH' });
    const first = await sale(t, home.id, [line('100.00', '19'), line('50.00', '7'), line('200.00', '0', 'zeroRated')], '2026-03-10', {
      serviceDate: '2026-02-01',
      serviceEndDate: '2026-02-28',
    });
    await sale(t, home.id, [line('300.00', '0', 'exempt', 'DE-4-14a'), line('400.00', '0', 'exempt', 'DE-4-12'), line('10.01', '19')], '2026-03-10');
    await sale(t, fr.id, [line('500.00', '0', 'intraCommunitySupply'), line('600.00', '0', 'reverseCharge')], '2026-03-11');
    await sale(t, ch.id, [line('700.00', '0', 'export'), line('800.00', '0', 'notSubject'), line('0.33', '19')], '2026-03-12');
    // Legacy 0 % lines without a category, inferred from the buyer (reverse charge, export, tax-free).
    for (const c of [home, fr, ch]) {
      const legacy = await sale(t, c.id, [line('50.00', '0', 'exempt', 'DE-4-8')], '2026-03-13');
      await db()('invoiceItems').where({ invoiceId: legacy.id }).update({ taxCategory: null, exemptionReason: null });
    }
    // A credit note (the Storno of an invoice) and payments on an invoice and on the credit note.
    const paid = await sale(t, home.id, [line('1000.00', '19')], '2026-03-14');
    await recordPayment(t, null, paid.id, { amount: '500.00', date: '2026-03-20' });
    const { creditNoteId } = await cancelInvoice(t, team.member, first.id);
    expect(creditNoteId).toBeTruthy();
    await db()('invoices').where({ id: creditNoteId }).update({ issueDate: '2026-03-15', dueDate: '2026-03-15' });
    // A payment on a credit note (money paid back; the Storno itself is settled, so written directly).
    await db()('payments').insert({ tenantId: t.id, invoiceId: creditNoteId, amount: '50.00', date: '2026-03-21', method: 'bank_transfer' });
    // Incoming: chart default, supplier default account, reverse charge, ig. Erwerb, foreign VAT, two rates.
    const office = await createSupplier(t, { name: 'Bürobedarf Ölmann' });
    const rent = await createSupplier(t, { name: 'Vermieter "Haus"' });
    await db()('suppliers').where({ id: rent.id }).update({ defaultExpenseAccount: '4210' });
    const eu = await createSupplier(t, { name: 'EU Service B.V.' });
    const bought = await purchase(t, office.id, '2026-03-05', [line('100.00', '19'), line('20.00', '7')]);
    await purchase(t, rent.id, '2026-03-06', [line('1200.00', '19')]);
    await purchase(t, eu.id, '2026-03-07', [line('1000.00', '0')], 'reverseCharge');
    await purchase(t, eu.id, '2026-03-07', [line('2000.00', '0')], 'intraCommunitySupply');
    // Foreign VAT is set by the e-invoice import only: stored on the line afterwards, as it reads.
    await purchase(t, eu.id, '2026-03-08', [line('100.00', '19')], 'foreignVat');
    await recordPayment(t, null, bought.id, { amount: '140.40', date: '2026-03-25' });

    const march = await expectSame(t.id, monthPeriod(2026, 3), 20);
    await expectSame(t.id, quarterPeriod(2026, 1), 20);
    // The file holds the characters Windows-1252 has, and "?" for those it lacks.
    const text = iconv.decode(march, 'windows-1252');
    expect(text).toContain('Müller „Bau“ GmbH € ""Nord""');
    expect(text).toContain('Kunde AG Zürich ??');
    expect(march.includes(Buffer.from('€', 'utf8'))).toBe(false);

    // The route answers the same bookings (its header has the time of the download).
    const res = await client(server.url, { token: team.viewer.token }).get('/api/reports/datev?year=2026&month=3');
    expect(res.status).toBe(200);
    expect(lines(res.raw).slice(1)).toEqual(lines(march).slice(1));
    // Compressed at the fastest level when accepted (fetch decodes it): the same file.
    for (const [accept, encoding] of [
      ['gzip', 'gzip'],
      ['br', 'br'],
      ['identity', null],
    ] as const) {
      const r = await client(server.url, { token: team.viewer.token }).get('/api/reports/datev?year=2026&month=3', { headers: { 'accept-encoding': accept } });
      expect(r.headers.get('content-encoding'), accept).toBe(encoding);
      expect(lines(r.raw).slice(1), accept).toEqual(lines(march).slice(1));
    }
  });

  it('AT (EKR) and a small business, with foreign-currency documents and text Latin-1 holds', async () => {
    const team = await createTeam({ country: 'AT' });
    const t = team.tenant;
    const home = await createCustomer(t, { name: 'Österreicher', company: 'Grüße & Söhne', country: 'AT' });
    const us = await createCustomer(t, { name: 'US Customer', company: 'Acme Corp', country: 'US' });
    await sale(t, home.id, [line('100.00', '20'), line('50.00', '13'), line('30.00', '10')], '2026-03-10');
    const usd = await sale(t, us.id, [line('1000.00', '0', 'export')], '2026-03-12', {
      currency: 'USD',
      exchangeRate: { rate: '1.0900', date: '2026-03-12', source: 'manual' },
    });
    await recordPayment(t, null, usd.id, { amount: '545.00', date: '2026-03-20' });
    const cloud = await createSupplier(t, { name: 'US Cloud Inc.' });
    await purchase(t, cloud.id, '2026-03-15', [line('100.00', '0')], undefined, {
      currency: 'USD',
      exchangeRate: { rate: '1.0900', date: '2026-03-15', source: 'manual' },
    });
    // Only characters Latin-1 and Windows-1252 encode alike: the file takes the Latin-1 path.
    const march = await expectSame(t.id, monthPeriod(2026, 3), 6);
    expect(iconv.decode(march, 'windows-1252')).toContain('Grüße & Söhne');

    const small = await createTeam({
      country: 'DE',
      vatId: 'DE987654321',
      taxNumber: '9198011310011',
      address: 'Musterstraße 2\n10115 Berlin',
      settings: JSON.stringify({ datev: { chart: 'SKR04' }, smallBusiness: true }),
    });
    const c = await createCustomer(small.tenant, { name: 'Inland', country: 'DE' });
    await sale(small.tenant, c.id, [line('150.00', '0')], '2026-03-10');
    const s = await createSupplier(small.tenant, { name: 'EU GmbH' });
    await purchase(small.tenant, s.id, '2026-03-12', [line('250.00', '0')], 'reverseCharge');
    await purchase(small.tenant, s.id, '2026-03-12', [line('100.00', '19')]);
    await expectSame(small.tenant.id, monthPeriod(2026, 3), 3);
  });

  it('many lines: a FETCH written and encoded piece by piece gives the same bytes, Latin-1 and Windows-1252 pieces mixed', async () => {
    const team = await createTeam({ country: 'DE', vatId: 'DE123456789', taxNumber: '9198011310010', address: 'Musterstraße 1\n10115 Berlin' });
    const t = team.tenant;
    const plain = await createCustomer(t, { name: 'Plain', company: 'Plain GmbH', country: 'DE' });
    const latin = await createCustomer(t, { name: 'Latin', company: 'Grüße & Söhne', country: 'DE' });
    const cp1252 = await createCustomer(t, { name: 'Cp', company: 'Müller „Bau“ € 中', country: 'DE' });
    const fr = await createCustomer(t, { name: 'FR', company: 'Client SARL', country: 'FR', vatId: 'FR40303265045' });
    await sale(t, plain.id, [line('100.00', '19'), line('50.00', '7')], '2026-03-02');
    await sale(t, latin.id, [line('10.00', '19')], '2026-03-03');
    await sale(t, fr.id, [line('500.00', '0', 'intraCommunitySupply'), line('600.00', '0', 'reverseCharge')], '2026-03-04');
    await sale(t, cp1252.id, [line('20.00', '19')], '2026-03-05');
    const legacy = await sale(t, fr.id, [line('50.00', '0', 'exempt', 'DE-4-8')], '2026-03-06');
    await db()('invoiceItems').where({ invoiceId: legacy.id }).update({ taxCategory: null, exemptionReason: null });
    // 120 copies of each (own ids and numbers, their items with them), spread over the month: the
    // sales cursor's FETCHes hold pieces of Latin-1 text, pieces with €, „“ or 中, and 0 % splits.
    await db().transaction(async (trx) => {
      await trx.raw(
        `create temp table clone_map on commit drop as
           select i.id as old_id, gen_random_uuid() as new_id, g
             from invoices i, generate_series(1, 120) g where i.tenant_id = ?`,
        [t.id],
      );
      await trx.raw(
        `insert into invoices
         select (jsonb_populate_record(null::invoices, to_jsonb(i) || jsonb_build_object(
                   'id', m.new_id, 'number', i.number || '-' || m.g, 'credit_note_id', null, 'external_id', null,
                   'issue_date', (date '2026-03-01' + (m.g % 28))::text))).*
           from clone_map m join invoices i on i.id = m.old_id`,
      );
      await trx.raw(
        `insert into invoice_items
         select (jsonb_populate_record(null::invoice_items, to_jsonb(ii) || jsonb_build_object('id', gen_random_uuid(), 'invoice_id', m.new_id))).*
           from clone_map m join invoice_items ii on ii.invoice_id = m.old_id`,
      );
    });
    const march = await expectSame(t.id, monthPeriod(2026, 3), 121 * 7);
    expect(lines(march).length).toBeGreaterThan(4 * DATEV_LINES_PER_PIECE);
    const text = iconv.decode(march, 'windows-1252');
    expect(text).toContain('Müller „Bau“ € ?');
    expect(text).toContain('Grüße & Söhne');
  });

  it('a check that fails rejects before any byte and ends the transaction of the chunks read ahead', async () => {
    const team = await createTeam({ country: 'DE', vatId: 'DE123456789', taxNumber: '9198011310010', address: 'Musterstraße 1\n10115 Berlin' });
    const home = await createCustomer(team.tenant, { name: 'Inland', country: 'DE' });
    await sale(team.tenant, home.id, [line('100.00', '19')], '2026-03-10');
    await db()('tenants')
      .where({ id: team.tenant.id })
      .update({ settings: JSON.stringify({ datev: { chart: 'EKR' } }) }); // no 19 % in EKR
    const tenant = await loadReportTenant(db(), team.tenant.id);
    const pool = (db().client as { pool: { numUsed(): number } }).pool;
    const usedBefore = pool.numUsed();
    await expect(datevExportStream(tenant, monthPeriod(2026, 3))).rejects.toThrow(/19/);
    expect(pool.numUsed()).toBe(usedBefore);
  });
});
