/**
 * How an e-invoice is booked beyond its lines (docs/e-invoicing-inbound.md, "Booking"), through the
 * API and a real worker: the stated VAT per rate within BR-CO-17's tolerance, foreign VAT left out
 * of the UStVA / U30 input tax, a credit note linked to the supplier's invoice it corrects, and a
 * foreign currency without a stored ECB rate booked without one until the user enters it.
 */
import { describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import { db } from '../../../shared/db';
import { storeExchangeRates } from '../../../shared/commands/exchangeRates';
import { useWorkers } from '../../helpers/workers';
import { createTeam } from '../../helpers/factories';
import { useTestServer } from '../../helpers/server';
import { uploadAndSettle, ublDocument } from '../../helpers/incomingEinvoices';

const ubl = ublDocument;

const env = useTestServer();
useWorkers(['documents', 'maintenance']);

type Team = Awaited<ReturnType<typeof createTeam>>;
const deTeam = () => createTeam({ country: 'DE', vatId: 'DE811907980' });
const atTeam = () => createTeam({ country: 'AT', vatId: 'ATU13585627' });

async function importDoc(team: Team, bytes: Buffer) {
  const row = await uploadAndSettle(env.http, team, bytes);
  const invoice = row.invoiceId ? (await env.http.get(`/api/invoices/${row.invoiceId}`, { token: team.viewer.token })).body : null;
  return { row, invoice };
}

const ust = (team: Team, q = 'year=2026&month=3') => env.http.get(`/api/reports/ust?${q}`, { token: team.viewer.token });

describe('stated VAT per rate (BR-CO-17 tolerance)', () => {
  it('0.01 off: booked as stated, on the invoice, its lines, the breakdown and the UStVA input tax, with a warning', async () => {
    const team = await deTeam();
    // 19 % of 3986.34 is 757.40; the document states 757.41 (as KoSIT's 01.06 does).
    const { row, invoice } = await importDoc(team, ubl({ number: 'ST-1', lines: [{ net: '3986.34', rate: '19' }], statedTax: { '19': '757.41' } }));
    expect(row.status).toBe('imported');
    expect(row.warnings).toContainEqual(
      expect.stringMatching(/VAT at 19 % booked as the document states it \(BT-117 757\.41\).*757\.40, a difference of 0\.01/),
    );
    expect(invoice).toMatchObject({ totalNet: '3986.34', totalTax: '757.41', totalGross: '4743.75' });
    expect(invoice.items[0]).toMatchObject({ taxAmount: '757.41', grossAmount: '4743.75', taxCategory: 'standard' });
    const stored = await db()('invoices').where({ id: row.invoiceId }).first();
    expect(stored.taxBreakdown).toEqual([{ taxRate: '19', net: '3986.34', tax: '757.41' }]);
    const report = await ust(team);
    expect(report.status).toBe(200);
    expect(report.body.kennzahlen['66']).toBe('757.41');
  });

  it('0.99 off over two lines: the difference goes to the larger line, the lines add up to the stated tax', async () => {
    const team = await deTeam();
    const { row, invoice } = await importDoc(
      team,
      ubl({
        number: 'ST-2',
        lines: [
          { net: '100.00', rate: '19' },
          { net: '300.00', rate: '19' },
          { net: '50.00', rate: '7' },
        ],
        statedTax: { '19': '76.99', '7': '3.50' },
      }),
    );
    expect(row.status).toBe('imported');
    expect(invoice.totalTax).toBe('80.49');
    expect(invoice.items.map((i: { taxAmount: string }) => i.taxAmount)).toEqual(['19.00', '57.99', '3.50']);
    expect(row.warnings.filter((w: string) => w.startsWith('VAT at'))).toHaveLength(1);
  });

  it('1.00 off: rejected with BR-CO-17 naming the difference, nothing booked', async () => {
    const team = await deTeam();
    const { row } = await importDoc(team, ubl({ number: 'ST-3', lines: [{ net: '3986.34', rate: '19' }], statedTax: { '19': '758.40' } }));
    expect(row).toMatchObject({ status: 'rejected', invoiceId: null });
    expect(row.errors).toEqual([{ rule: 'BR-CO-17', message: expect.stringMatching(/758\.40 at 19 %.*757\.40: a difference of 1\.00/) }]);
    expect(await db()('invoices').where({ tenantId: team.tenant.id })).toHaveLength(0);
  });

  it('the public create API has no stated tax: its computed tax stands', async () => {
    const team = await deTeam();
    const supplier = await env.http.post('/api/suppliers', { name: 'Hand' }, { token: team.member.token });
    const res = await env.http.post(
      '/api/invoices',
      {
        type: 'eingangsrechnung',
        supplierId: supplier.body.id,
        invoiceNumber: 'H-1',
        invoiceDate: '2026-03-10',
        items: [{ description: 'x', quantity: 1, unitPrice: '3986.34', taxRate: '19' }],
        statedTax: [{ taxRate: '19', tax: '757.41' }],
      },
      { token: team.member.token },
    );
    expect(res.status).toBe(400);
    const ok = await env.http.post(
      '/api/invoices',
      {
        type: 'eingangsrechnung',
        supplierId: supplier.body.id,
        invoiceNumber: 'H-1',
        invoiceDate: '2026-03-10',
        items: [{ description: 'x', quantity: 1, unitPrice: '3986.34', taxRate: '19', taxCategory: 'foreignVat' }],
      },
      { token: team.member.token },
    );
    expect(ok.status).toBe(400);
  });
});

describe('foreign VAT', () => {
  it('a German invoice (19 %, 7 %) received by an Austrian tenant: imported as foreignVat, not in the U30 input tax, DATEV books the gross without a key', async () => {
    const team = await atTeam();
    const { row, invoice } = await importDoc(
      team,
      ubl({
        number: 'DE-1',
        lines: [
          { net: '200.00', rate: '19' },
          { net: '100.00', rate: '7' },
        ],
      }),
    );
    expect(row.status).toBe('imported');
    expect(row.warnings).toContainEqual(
      expect.stringMatching(/^foreign VAT from a supplier in DE at 7 %, 19 % booked as foreignVat: .*§ 21 Abs\. 9 UStG 1994/),
    );
    expect(invoice).toMatchObject({ totalNet: '300.00', totalTax: '45.00', totalGross: '345.00' });
    expect(invoice.items.map((i: { taxCategory: string; taxRate: string }) => [i.taxCategory, i.taxRate])).toEqual([
      ['foreignVat', '19'],
      ['foreignVat', '7'],
    ]);
    const report = await ust(team);
    expect(report.status).toBe(200);
    expect(report.body.kennzahlen['060']).toBe('0.00');

    // The BWA counts the foreign VAT as cost: net 300.00 + 45.00, nothing deducted.
    const bwa = await env.http.get('/api/reports/bwa?year=2026', { token: team.viewer.token });
    expect(bwa.status).toBe(200);
    expect(bwa.body.months[2].result.current).toBe('-345.00');

    const datev = await env.http.get('/api/reports/datev?year=2026&month=3', { token: team.admin.token });
    expect(datev.status).toBe(200);
    const [, columns, ...rows] = iconv
      .decode(datev.raw, 'windows-1252')
      .trimEnd()
      .split('\r\n')
      .map((l) => l.split(';').map((f) => f.replace(/^"|"$/g, '')));
    const booked = rows.filter((r) => r[columns.indexOf('Belegfeld 1')] === 'DE-1');
    expect(booked.map((r) => [r[columns.indexOf('Umsatz (ohne Soll/Haben-Kz)')], r[columns.indexOf('BU-Schlüssel')]]).sort()).toEqual([
      ['107,00', ''],
      ['238,00', ''],
    ]);
  });

  it('a Danish supplier’s 25 % to a German tenant is foreignVat; a domestic invoice beside it keeps its input tax', async () => {
    const team = await deTeam();
    const dk = await importDoc(
      team,
      ubl({ number: 'DK-1', seller: { name: 'Dansk A/S', vatId: 'DK13585628', country: 'DK' }, lines: [{ net: '100.00', rate: '25' }] }),
    );
    expect(dk.row.status).toBe('imported');
    expect(dk.invoice.items[0]).toMatchObject({ taxCategory: 'foreignVat', taxRate: '25', taxAmount: '25.00' });
    const de = await importDoc(team, ubl({ number: 'DE-2', lines: [{ net: '100.00', rate: '19' }] }));
    expect(de.row.warnings.filter((w: string) => w.startsWith('foreign VAT'))).toEqual([]);
    expect(de.invoice.items[0]).toMatchObject({ taxCategory: 'standard', taxAmount: '19.00' });
    const report = await ust(team);
    expect(report.status).toBe(200);
    expect(report.body.kennzahlen['66']).toBe('19.00');
  });

  it('a French supplier at 20 % to an Austrian tenant (a rate Austria has too) is foreignVat by the seller’s country', async () => {
    const team = await atTeam();
    const { invoice } = await importDoc(
      team,
      ubl({ number: 'FR-1', seller: { name: 'SARL', vatId: 'FR40303265045', country: 'FR' }, lines: [{ net: '50.00', rate: '20' }] }),
    );
    expect(invoice.items[0]).toMatchObject({ taxCategory: 'foreignVat', taxRate: '20' });
    expect((await ust(team)).body.kennzahlen['060']).toBe('0.00');
  });
});

describe('credit notes', () => {
  it('are linked to the same supplier’s invoice they name (BT-25); an unknown one stays in the notes with a warning', async () => {
    const team = await deTeam();
    const inv = await importDoc(team, ubl({ number: 'R-100', lines: [{ net: '100.00', rate: '19' }] }));
    expect(inv.row.status).toBe('imported');
    const cn = await importDoc(team, ubl({ kind: 'CreditNote', number: 'G-1', preceding: 'R-100', lines: [{ net: '40.00', rate: '19' }] }));
    expect(cn.row.status).toBe('imported');
    expect(cn.invoice).toMatchObject({ totalGross: '-47.60', relatedInvoiceId: inv.row.invoiceId, relatedInvoiceNumber: 'R-100' });
    expect(cn.row.warnings.filter((w: string) => w.startsWith('the credit note'))).toEqual([]);

    const orphan = await importDoc(team, ubl({ kind: 'CreditNote', number: 'G-2', preceding: 'R-999', lines: [{ net: '10.00', rate: '19' }] }));
    expect(orphan.row.status).toBe('imported');
    expect(orphan.invoice).toMatchObject({ relatedInvoiceId: null, notes: 'Gutschrift zu Rechnung R-999' });
    expect(orphan.row.warnings).toContainEqual(expect.stringMatching(/corrects invoice R-999 of this supplier, which is not booked here/));

    // Another supplier's invoice of that number is not this credit note's.
    const other = await importDoc(
      team,
      ubl({
        kind: 'CreditNote',
        number: 'G-3',
        preceding: 'R-100',
        seller: { name: 'Andere GmbH', vatId: 'DE129273398', country: 'DE' },
        lines: [{ net: '1.00', rate: '19' }],
      }),
    );
    expect(other.invoice.relatedInvoiceId).toBeNull();
  });
});

describe('a currency without a stored ECB rate', () => {
  it('is booked without a rate and a warning; the reports refuse the period until the rate is entered with PUT', async () => {
    const team = await deTeam();
    const { row, invoice } = await importDoc(team, ubl({ number: 'SEK-1', currency: 'SEK', date: '2026-03-10', lines: [{ net: '1000.00', rate: '19' }] }));
    expect(row.status).toBe('imported');
    expect(invoice).toMatchObject({ currency: 'SEK', exchangeRate: null, totalGross: '1190.00' });
    expect(row.warnings).toContainEqual(
      `no ECB rate for SEK on 2026-03-10: enter the invoice's exchangeRate (PUT /api/invoices/${row.invoiceId}) before the VAT return of that period; until then the reports of that period answer 422 FOREIGN_CURRENCY`,
    );
    const refused = await ust(team);
    expect(refused.status).toBe(422);
    expect(refused.body.error.reason).toBe('FOREIGN_CURRENCY');

    const rate = { rate: '11.2', date: '2026-03-10', source: 'manual' };
    const put = await env.http.put(`/api/invoices/${row.invoiceId}`, { exchangeRate: rate }, { token: team.manager.token });
    expect(put.status).toBe(200);
    const after = await env.http.get(`/api/invoices/${row.invoiceId}`, { token: team.viewer.token });
    expect(after.body.exchangeRate).toMatchObject({ rate: '11.2', date: '2026-03-10', source: 'manual' });
    const report = await ust(team);
    expect(report.status).toBe(200);
    expect(report.body.kennzahlen['66']).toBe('16.96'); // 190.00 SEK / 11.2
    // Once given, the rate is frozen like any other.
    const again = await env.http.put(`/api/invoices/${row.invoiceId}`, { exchangeRate: { ...rate, rate: '11.3' } }, { token: team.manager.token });
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe('IMMUTABLE');
  });

  it('takes the ECB rate of the invoice date when one is stored', async () => {
    const team = await deTeam();
    // A day no other test file stores a rate for.
    const day = { currency: 'NOK', date: '2019-07-09', rate: '9.7125' };
    await db().transaction((trx) => storeExchangeRates({ trx }, [day]));
    try {
      const { row, invoice } = await importDoc(team, ubl({ number: 'NOK-1', currency: 'NOK', date: day.date, lines: [{ net: '100.00', rate: '19' }] }));
      expect(row.status).toBe('imported');
      expect(invoice.exchangeRate).toMatchObject({ rate: '9.7125', date: day.date, source: 'ecb' });
      expect(row.warnings.filter((w: string) => w.startsWith('no ECB rate'))).toEqual([]);
    } finally {
      await db()('exchangeRates').where({ currency: day.currency, rateDate: day.date }).delete();
    }
  });
});
