import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import { db } from '../../../shared/db';
import type { InvoiceItemInput } from '../../../shared/domain/invoiceInput';
import { monthPeriod } from '../../../shared/domain/tax/period';
import { computeU30 } from '../../../shared/domain/tax/u30';
import { loadVatAggregates } from '../../../shared/queries/reports/vatAggregates';
import { zmRows } from '../../../shared/queries/reports/zm';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { cancelInvoice, createCustomer, createIncomingInvoice, createSentInvoice, createSupplier } from '../../helpers/invoiceFactory';
import { validateXml } from '../../helpers/xmllint';
import { needsOfficialFiles, schemaPath } from '../../helpers/officialFiles';
import { asLegacy2013, ELSTER_LEGACY_FILE, ELSTER_LEGACY_XSD } from '../../helpers/elsterLegacy';
import { startWorkers, type RunningWorkers } from '../../../workers/worker';

/**
 * VAT returns and the ZM from the stored line categories (docs/tax-reports.md): hand-built March
 * 2026 books that mix every category on the sales side and reverse-charge services and
 * intra-Community acquisitions on the purchase side; the answers are computed by hand below.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;
const U30_XSD = 'u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_01_2022.xsd';
const official = needsOfficialFiles([`schemas:${U30_XSD}`]);
const officialElster = needsOfficialFiles([ELSTER_LEGACY_FILE]);

beforeAll(async () => {
  server = await startTestServer();
  workers = await startWorkers({ queues: ['reports'], schedule: false });
});
afterAll(async () => {
  await workers?.close();
  await server?.close();
});

const line = (unitPrice: string, taxRate: string, extra: Partial<InvoiceItemInput> = {}): InvoiceItemInput => ({
  description: `Leistung ${extra.taxCategory ?? taxRate}`,
  quantity: '1',
  unitPrice,
  taxRate,
  ...extra,
});

/** A sent invoice (or credit note), dated as in the book (the commands date it today). */
async function sale(tenant: { id: string }, customerId: string, items: InvoiceItemInput[], type: 'rechnung' | 'gutschrift' = 'rechnung') {
  const inv = await createSentInvoice(tenant, null, { type, customerId, items });
  await db()('invoices').where({ id: inv.id }).update({ issueDate: '2026-03-15', dueDate: '2026-03-15' });
  return inv;
}

async function purchase(tenant: { id: string }, supplierId: string, items: InvoiceItemInput[]) {
  return createIncomingInvoice(tenant, null, { supplierId, invoiceDate: '2026-03-20', items });
}

/**
 * Austrian book, March 2026 (tenant with VAT ID ATU12345678):
 *  domestic 1000.00 @20, 100.00 @10, 200.00 @13
 *  DE business DE123456789: 2000.00 intraCommunitySupply, credit note −200.00 intraCommunitySupply, 500.00 reverseCharge
 *  IT business IT12345678901: 100.00 reverseCharge
 *  Swiss customer: 300.00 @0 (inferred export)
 *  domestic exempt: 400.00 AT-6-1-9a (land), 150.00 AT-6-1-19 (doctor); 250.00 notSubject
 *  purchases: 100.00 @20 (input tax 20.00); 1000.00 reverseCharge (services); 500.00 intraCommunitySupply (acquisition)
 */
async function austrianBook() {
  const team = await createTeam({ country: 'AT', vatId: 'ATU12345678', taxNumber: '12-345/6789', address: 'Hauptstraße 1\n1010 Wien' });
  const t = team.tenant;
  const dom = await createCustomer(t, { name: 'Inland' });
  const de = await createCustomer(t, { name: 'DE GmbH', company: 'DE GmbH', vatId: 'DE123456789', country: 'DE' });
  const it = await createCustomer(t, { name: 'IT Srl', company: 'IT Srl', vatId: 'IT12345678901', country: 'IT' });
  const ch = await createCustomer(t, { name: 'Zürich AG', country: 'CH' });
  await sale(t, dom.id, [line('1000.00', '20'), line('100.00', '10'), line('200.00', '13')]);
  await sale(t, de.id, [line('2000.00', '0', { taxCategory: 'intraCommunitySupply' }), line('500.00', '0', { taxCategory: 'reverseCharge' })]);
  await sale(t, de.id, [line('200.00', '0', { taxCategory: 'intraCommunitySupply' })], 'gutschrift');
  await sale(t, it.id, [line('100.00', '0', { taxCategory: 'reverseCharge' })]);
  await sale(t, ch.id, [line('300.00', '0')]);
  await sale(t, dom.id, [
    line('400.00', '0', { taxCategory: 'exempt', exemptionReason: 'AT-6-1-9a' }),
    line('150.00', '0', { taxCategory: 'exempt', exemptionReason: 'AT-6-1-19' }),
    line('250.00', '0', { taxCategory: 'notSubject' }),
  ]);
  const domestic = await createSupplier(t, { name: 'Inland Lieferant' });
  const eu = await createSupplier(t, { name: 'EU Lieferant' });
  await purchase(t, domestic.id, [line('100.00', '20')]);
  await purchase(t, eu.id, [line('1000.00', '0', { taxCategory: 'reverseCharge' })]);
  await purchase(t, eu.id, [line('500.00', '0', { taxCategory: 'intraCommunitySupply' })]);
  return team;
}

/**
 * German book, March 2026 (tenant with VAT ID DE123456789):
 *  domestic 1000.00 @19, 200.00 @7, 500.00 zeroRated (§ 12 Abs. 3), 250.00 exempt DE-4-14a, 120.00 notSubject
 *  AT business ATU12345678: 1500.00 intraCommunitySupply, 700.00 reverseCharge
 *  US customer: 300.00 @0 (inferred export)
 *  purchases: 200.00 @19 (input tax 38.00); 1000.50 reverseCharge (§ 13b services); 400.00 intraCommunitySupply (acquisition)
 */
async function germanBook() {
  const team = await createTeam({ country: 'DE', vatId: 'DE123456789', taxNumber: '9198011310010', address: 'Musterstraße 1\n10115 Berlin' });
  const t = team.tenant;
  const dom = await createCustomer(t, { name: 'Inland' });
  const at = await createCustomer(t, { name: 'Wien GmbH', company: 'Wien GmbH', vatId: 'ATU12345678', country: 'AT' });
  const us = await createCustomer(t, { name: 'US Inc', country: 'US' });
  await sale(t, dom.id, [
    line('1000.00', '19'),
    line('200.00', '7'),
    line('500.00', '0', { taxCategory: 'zeroRated' }),
    line('250.00', '0', { taxCategory: 'exempt', exemptionReason: 'DE-4-14a' }),
    line('120.00', '0', { taxCategory: 'notSubject' }),
  ]);
  await sale(t, at.id, [line('1500.00', '0', { taxCategory: 'intraCommunitySupply' }), line('700.00', '0', { taxCategory: 'reverseCharge' })]);
  await sale(t, us.id, [line('300.00', '0')]);
  const domestic = await createSupplier(t, { name: 'Inland Lieferant' });
  const eu = await createSupplier(t, { name: 'EU Lieferant' });
  await purchase(t, domestic.id, [line('200.00', '19')]);
  await purchase(t, eu.id, [line('1000.50', '0', { taxCategory: 'reverseCharge' })]);
  await purchase(t, eu.id, [line('400.00', '0', { taxCategory: 'intraCommunitySupply' })]);
  return team;
}

describe('U30 from the stored categories (AT)', () => {
  let team: Awaited<ReturnType<typeof austrianBook>>;
  let http: ReturnType<typeof client>;
  beforeAll(async () => {
    team = await austrianBook();
    http = client(server.url, { token: team.viewer.token });
  });

  it('every category in its Kennzahl, purchases owing tax with their deduction', async () => {
    const res = await http.get('/api/reports/ust?year=2026&month=3');
    expect(res.status).toBe(200);
    // 0 %: 2000 − 200 + 500 + 100 + 300 + 400 + 150 + 250 = 3500; 000 = 1300 + 3500 − 250 (not subject) = 4550
    // 000 − 021 − (011 + 017 + 019 + 020) = 4550 − 600 − 2650 = 1300 = 022 + 029 + 006
    // output tax 200.00 + 10.00 + 26.00 = 236.00; 057 = 1000 × 20 % = 200.00 = 066; acquisition 500.00 → tax 100.00 = 065
    // 095 = 236.00 + 200.00 + 100.00 − (20.00 + 100.00 + 200.00) = 216.00
    expect(res.body.kennzahlen).toEqual({
      '000': '4550.00',
      '011': '300.00',
      '017': '1800.00',
      '019': '400.00',
      '020': '150.00',
      '021': '600.00',
      '022': '1000.00',
      '029': '100.00',
      '006': '200.00',
      '057': '200.00',
      '060': '20.00',
      '065': '100.00',
      '066': '200.00',
      '070': '500.00',
      '072': '500.00',
      '095': '216.00',
    });
    expect(res.body).toMatchObject({ outputTax: '236.00', inputTax: '320.00', payable: '216.00', unclassifiedZeroRatedNet: '0.00' });
  });

  it.skipIf(!official)('the FinanzOnline file carries them and is valid against the XSD', async () => {
    const res = await http.get('/api/reports/ust?year=2026&month=3&format=xml');
    expect(res.status).toBe(200);
    const { valid, errors } = validateXml(res.raw, schemaPath(U30_XSD));
    expect(valid, errors).toBe(true);
    const xml = iconv.decode(res.raw, 'latin1');
    for (const [kz, v] of [
      ['000', '4550.00'],
      ['021', '600.00'],
      ['011', '300.00'],
      ['017', '1800.00'],
      ['019', '400.00'],
      ['020', '150.00'],
      ['057', '200.00'],
      ['070', '500.00'],
      ['072', '500.00'],
      ['060', '20.00'],
      ['065', '100.00'],
      ['066', '200.00'],
    ]) {
      expect(xml).toContain(`<KZ${kz} type="kz">${v}</KZ${kz}>`);
    }
    expect(xml).toMatch(/<\/LIEFERUNGEN_LEISTUNGEN_EIGENVERBRAUCH>\s*<INNERGEMEINSCHAFTLICHE_ERWERBE>\s*<KZ070/);
  });

  it('the U30 PDF prints the Kennzahlen the period has', async () => {
    const res = await http.get('/api/reports/ust?year=2026&month=3&format=pdf');
    expect(res.status).toBe(200);
    const { PDFParse } = await import('pdf-parse');
    const text = (await new PDFParse({ data: new Uint8Array(res.raw) }).getText()).text;
    expect(text).toContain('Grundstücksumsätze');
    expect(text).toContain('Vorsteuern aus dem innergemeinschaftlichen Erwerb');
    expect(text).not.toContain('Kleinunternehmer');
    expect(text).toContain('216,00');
  });

  it('ZM: supplies and services per buyer VAT ID, credit notes negative; xml the U13 upload', async () => {
    const res = await http.get('/api/reports/zm?year=2026&month=3');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ form: 'ZM', currency: 'EUR', period: { label: '2026-03' } });
    expect(res.body.lines).toEqual([
      { vatId: 'DE123456789', supplies: '1800.00', services: '500.00', triangular: '0.00' },
      { vatId: 'IT12345678901', supplies: '0.00', services: '100.00', triangular: '0.00' },
    ]);
    expect(res.body.totals).toEqual({ supplies: '1800.00', services: '600.00', triangular: '0.00' });

    const q = await http.get('/api/reports/zm?year=2026&quarter=1');
    expect(q.body.totals).toEqual(res.body.totals);
    const april = await http.get('/api/reports/zm?year=2026&month=4');
    expect(april.body).toMatchObject({ lines: [], totals: { supplies: '0.00', services: '0.00', triangular: '0.00' } });
    const aprilXml = await http.get('/api/reports/zm?year=2026&month=4&format=xml');
    expect(aprilXml.status).toBe(422);

    const xml = await http.get('/api/reports/zm?year=2026&month=3&format=xml');
    expect(xml.status).toBe(200);
    expect(xml.headers.get('content-type')).toContain('application/xml');
    const text = iconv.decode(xml.raw, 'latin1');
    expect(text).toContain('<ERKLAERUNG art="U13">');
    expect(text).toContain('<UID_MS>DE123456789</UID_MS>\n\t\t\t<SUM_BGL type="kz">1800</SUM_BGL>');
    expect(text).toContain('<UID_MS>IT12345678901</UID_MS>\n\t\t\t<SUM_BGL type="kz">100</SUM_BGL>\n\t\t\t<SOLEI>J</SOLEI>');
  });
});

describe('a small business (AT): no output tax, no input tax deduction, reverse-charge tax still owed', () => {
  it('KZ 016, no 060/066, KZ 057 payable; the file is valid', async () => {
    const team = await createTeam({ country: 'AT', taxNumber: '12-345/6789', address: 'Hauptstraße 1\n1010 Wien' });
    const admin = client(server.url, { token: team.admin.token });
    expect((await admin.put('/api/settings', { smallBusiness: true })).status).toBe(200);
    const dom = await createCustomer(team.tenant, { name: 'Inland' });
    await sale(team.tenant, dom.id, [line('800.00', '0')]);
    const s = await createSupplier(team.tenant, { name: 'Lieferant' });
    await purchase(team.tenant, s.id, [line('100.00', '20')]);
    await purchase(team.tenant, s.id, [line('300.00', '0', { taxCategory: 'reverseCharge' })]);

    const res = await admin.get('/api/reports/ust?year=2026&month=3');
    // 000 = 016 = 800.00; 057 = 300 × 20 % = 60.00, not deducted; the 20.00 incoming VAT is cost
    expect(res.body.kennzahlen).toEqual({
      '000': '800.00',
      '011': '0.00',
      '016': '800.00',
      '017': '0.00',
      '021': '0.00',
      '022': '0.00',
      '029': '0.00',
      '006': '0.00',
      '057': '60.00',
      '060': '0.00',
      '095': '60.00',
    });
    expect(res.body).toMatchObject({ outputTax: '0.00', inputTax: '0.00', payable: '60.00' });
    if (official) {
      const xml = await admin.get('/api/reports/ust?year=2026&month=3&format=xml');
      expect(xml.status).toBe(200);
      const { valid, errors } = validateXml(xml.raw, schemaPath(U30_XSD));
      expect(valid, errors).toBe(true);
      expect(iconv.decode(xml.raw, 'latin1')).toContain('<KZ016 type="kz">800.00</KZ016>');
    }
  });
});

describe('UStVA from the stored categories (DE)', () => {
  let team: Awaited<ReturnType<typeof germanBook>>;
  let http: ReturnType<typeof client>;
  beforeAll(async () => {
    team = await germanBook();
    http = client(server.url, { token: team.viewer.token });
  });

  it('every category in its Kennzahl, § 13b and acquisitions with their deduction', async () => {
    const res = await http.get('/api/reports/ust?year=2026&month=3');
    expect(res.status).toBe(200);
    // 81: 1000 → 190.00; 86: 200 → 14.00; 46: 1000.50 → 1000, 47 = 190.00 = 67; 89: 400 → 76.00 = 61
    // 83 = 190.00 + 14.00 + 190.00 + 76.00 − 38.00 − 76.00 − 190.00 = 166.00
    expect(res.body.kennzahlen).toEqual({
      '21': '700',
      '41': '1500',
      '43': '300',
      '45': '120',
      '46': '1000',
      '47': '190.00',
      '48': '250',
      '61': '76.00',
      '66': '38.00',
      '67': '190.00',
      '81': '1000',
      '83': '166.00',
      '86': '200',
      '87': '500',
      '89': '400',
    });
    expect(res.body).toMatchObject({ inputTax: '304.00', payable: '166.00', unclassifiedZeroRatedNet: '0.00' });
  });

  it('the ELSTER XML carries them; valid against the 2013 schema (Kz 87 aside, which came with the 2023 form)', async () => {
    const res = await http.get('/api/reports/elster?year=2026&month=3');
    expect(res.status).toBe(200);
    const xml = iconv.decode(res.raw, 'iso-8859-15');
    for (const kz of ['<Kz21>700</Kz21>', '<Kz41>1500</Kz41>', '<Kz43>300</Kz43>', '<Kz45>120</Kz45>', '<Kz46>1000</Kz46>', '<Kz47>190.00</Kz47>']) {
      expect(xml).toContain(kz);
    }
    for (const kz of ['<Kz48>250</Kz48>', '<Kz61>76.00</Kz61>', '<Kz66>38.00</Kz66>', '<Kz67>190.00</Kz67>', '<Kz83>166.00</Kz83>', '<Kz87>500</Kz87>']) {
      expect(xml).toContain(kz);
    }
    expect(xml).toContain('<Kz89>400</Kz89>');
    if (officialElster) {
      const without87 = iconv.encode(xml.replace(/\s*<Kz87>500<\/Kz87>/, ''), 'iso-8859-15');
      const { valid, errors } = validateXml(asLegacy2013(without87), ELSTER_LEGACY_XSD);
      expect(valid, errors).toBe(true);
    }
  });

  it('ZM json per buyer VAT ID; xml is 400 (the BZSt format is not produced)', async () => {
    const res = await http.get('/api/reports/zm?year=2026&month=3&format=json');
    expect(res.status).toBe(200);
    expect(res.body.lines).toEqual([{ vatId: 'ATU12345678', supplies: '1500.00', services: '700.00', triangular: '0.00' }]);
    const xml = await http.get('/api/reports/zm?year=2026&month=3&format=xml');
    expect(xml.status).toBe(400);
    expect(xml.body.error.message).toMatch(/BZSt/);
  });

  it('a small business (§ 19): sales in no Kennzahl, § 13b tax owed without deduction', async () => {
    const small = await createTeam({ country: 'DE', taxNumber: '9198011310010', address: 'Musterstraße 1\n10115 Berlin' });
    const admin = client(server.url, { token: small.admin.token });
    expect((await admin.put('/api/settings', { smallBusiness: true })).status).toBe(200);
    const dom = await createCustomer(small.tenant, { name: 'Inland' });
    await sale(small.tenant, dom.id, [line('900.00', '0')]);
    const s = await createSupplier(small.tenant, { name: 'Lieferant' });
    await purchase(small.tenant, s.id, [line('100.00', '19')]);
    await purchase(small.tenant, s.id, [line('500.00', '0', { taxCategory: 'reverseCharge' })]);
    const res = await admin.get('/api/reports/ust?year=2026&month=3');
    // 46 = 500, 47 = 95.00; no 66/67; 83 = 95.00
    expect(res.body.kennzahlen).toEqual({ '21': '0', '41': '0', '43': '0', '46': '500', '47': '95.00', '66': '0.00', '81': '0', '83': '95.00', '86': '0' });
    expect(res.body.unclassifiedZeroRatedNet).toBe('0.00');
  });
});

describe('foreign-currency documents convert with their stored rate in the aggregates', () => {
  it('sales, input tax, reverse-charge purchases and ZM rows in EUR (amount / rate per document, half-up)', async () => {
    const team = await createTeam({ country: 'AT', vatId: 'ATU12345678', taxNumber: '12-345/6789', address: 'Hauptstraße 1\n1010 Wien' });
    const t = team.tenant;
    const rate = { rate: '1.2500', date: '2026-03-10', source: 'manual' as const };
    const us = await createCustomer(t, { name: 'US Inc', country: 'US' });
    const de = await createCustomer(t, { name: 'DE GmbH', company: 'DE GmbH', vatId: 'DE123456789', country: 'DE' });
    for (const [customerId, items] of [
      [us.id, [line('1000.00', '20'), line('333.33', '0')]],
      [de.id, [line('500.00', '0', { taxCategory: 'intraCommunitySupply' })]],
    ] as const) {
      const inv = await createSentInvoice(t, null, { customerId, currency: 'USD', exchangeRate: rate, items: [...items] });
      await db()('invoices').where({ id: inv.id }).update({ issueDate: '2026-03-15', dueDate: '2026-03-15' });
    }
    const s = await createSupplier(t, { name: 'US Cloud' });
    await createIncomingInvoice(t, null, { supplierId: s.id, invoiceDate: '2026-03-12', currency: 'USD', exchangeRate: rate, items: [line('100.00', '20')] });
    await createIncomingInvoice(t, null, {
      supplierId: s.id,
      invoiceDate: '2026-03-12',
      currency: 'USD',
      exchangeRate: rate,
      items: [line('250.00', '0', { taxCategory: 'reverseCharge' })],
    });

    const agg = await loadVatAggregates(db(), { id: t.id, country: 'AT', settings: {} }, monthPeriod(2026, 3));
    // 1000.00 / 1.25 = 800.00; 333.33 / 1.25 = 266.664 → 266.66 (export); 500.00 / 1.25 = 400.00 (IC supply)
    // input tax 20.00 / 1.25 = 16.00; reverse-charge purchase 250.00 / 1.25 = 200.00
    expect(agg).toMatchObject({ exportNet: '266.66', intraCommunitySupplyNet: '400.00', inputTax: '16.00', purchaseReverseChargeNet: '200.00' });
    const u30 = computeU30(agg);
    // 000 = 800.00 + 266.66 + 400.00; 095 = 160.00 + 40.00 − 16.00 − 40.00 = 144.00
    expect(u30.kennzahlen).toMatchObject({
      '000': '1466.66',
      '011': '266.66',
      '017': '400.00',
      '022': '800.00',
      '057': '40.00',
      '066': '40.00',
      '095': '144.00',
    });
    expect(await zmRows(db(), { id: t.id, country: 'AT' }, monthPeriod(2026, 3))).toEqual([{ vatId: 'DE123456789', kind: 'supplies', net: '400.00' }]);
  });
});

describe('ZM: cancellations and legacy lines', () => {
  it('a cancelled supply and its Storno credit note net out; a legacy 0 % line to an EU VAT ID counts as a service', async () => {
    const team = await createTeam({ country: 'AT', vatId: 'ATU12345678', taxNumber: '12-345/6789', address: 'Hauptstraße 1\n1010 Wien' });
    const t = team.tenant;
    const de = await createCustomer(t, { name: 'DE GmbH', company: 'DE GmbH', vatId: 'DE 123 456 789', country: 'DE' });
    const fr = await createCustomer(t, { name: 'FR SA', company: 'FR SA', vatId: 'FR12345678901', country: 'FR' });
    const cancelled = await sale(t, de.id, [line('700.00', '0', { taxCategory: 'intraCommunitySupply' })]);
    const { creditNoteId } = await cancelInvoice(t, null, cancelled.id);
    await db()('invoices').where({ id: creditNoteId! }).update({ issueDate: '2026-03-20', dueDate: '2026-03-20' });
    const legacy = await sale(t, fr.id, [line('90.00', '0', { taxCategory: 'reverseCharge' })]);
    // Data from before the categories: the line has none, the returns infer reverse charge from the VAT ID.
    await db()('invoice_items').where({ invoiceId: legacy.id }).update({ taxCategory: null });

    const http = client(server.url, { token: team.viewer.token });
    const res = await http.get('/api/reports/zm?year=2026&month=3');
    expect(res.body.lines).toEqual([{ vatId: 'FR12345678901', supplies: '0.00', services: '90.00', triangular: '0.00' }]);
    const u30 = await http.get('/api/reports/ust?year=2026&month=3');
    expect(u30.body.kennzahlen).toMatchObject({ '000': '90.00', '017': '0.00', '021': '90.00' });
    // Cancelled in April: March keeps the supply, April reverses it (negative line).
    const again = await sale(t, de.id, [line('300.00', '0', { taxCategory: 'intraCommunitySupply' })]);
    const storno = await cancelInvoice(t, null, again.id);
    await db()('invoices').where({ id: storno.creditNoteId! }).update({ issueDate: '2026-04-02', dueDate: '2026-04-02' });
    expect((await http.get('/api/reports/zm?year=2026&month=3')).body.lines).toContainEqual({
      vatId: 'DE123456789',
      supplies: '300.00',
      services: '0.00',
      triangular: '0.00',
    });
    expect((await http.get('/api/reports/zm?year=2026&month=4')).body.lines).toEqual([
      { vatId: 'DE123456789', supplies: '-300.00', services: '0.00', triangular: '0.00' },
    ]);
  });
});
