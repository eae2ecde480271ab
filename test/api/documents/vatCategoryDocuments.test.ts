/**
 * Issue 27, item 3 for documents: every VAT category an AT or DE seller meets, created and sent
 * through the API, then its ZUGFeRD PDF (visible wording, and the embedded CII valid against the
 * XSDs and our EN 16931 checker with the right BT-118/120/121) and its ebInterface (valid against
 * the 6.1 XSD, with the category and the wording).
 */
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkers, type RunningWorkers } from '../../../workers/worker';
import { checkEn16931 } from '../../../shared/formats/cii/en16931Rules';
import { createTeam } from '../../helpers/factories';
import { client, type TestClient } from '../../helpers/http';
import { needsOfficialFiles } from '../../helpers/officialFiles';
import { pdfAttachments, pdfText } from '../../helpers/pdf';
import { startTestServer } from '../../helpers/server';
import { validateXml } from '../../helpers/xmllint';
import { CII_D16B_XSD, CII_D16B_XSD_FILE, CII_XSD, CII_XSD_FILE, EBI_XSD, EBI_XSD_FILE } from '../../formats/cii/fixtures';

const official = needsOfficialFiles([CII_XSD_FILE, CII_D16B_XSD_FILE, EBI_XSD_FILE]);

let server: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;
let http: TestClient;

beforeAll(async () => {
  server = await startTestServer({ RENDER_WAIT_MS: '60000' });
  workers = await startWorkers({ queues: ['documents'], schedule: false });
  http = client(server.url);
});
afterAll(async () => {
  await workers.close();
  await server.close();
});

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', removeNSPrefix: true, parseTagValue: false });
const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
/** pdftotext -layout breaks and pads lines; compare on single spaces. */
const flat = (s: string) => s.replace(/\s+/g, ' ');

type Country = 'AT' | 'DE';

const SELLERS: Record<Country, Record<string, unknown>> = {
  AT: { country: 'AT', name: 'Alpen Software GmbH', vatId: 'ATU12345678', address: 'Mariahilfer Straße 1\n1060 Wien' },
  DE: { country: 'DE', name: 'Spree Software GmbH', vatId: 'DE123456789', taxNumber: '9198011310010', address: 'Musterstraße 1\n10115 Berlin' },
};
const DOMESTIC: Record<Country, Record<string, unknown>> = {
  AT: { company: 'Berger Bau GmbH', address: 'Hauptplatz 1\n8010 Graz', country: 'AT' },
  DE: { company: 'Havel Handel GmbH', address: 'Hauptstraße 5\n14467 Potsdam', country: 'DE' },
};
/** A business in the other member state (reverse charge, intra-Community supply). */
const EU_BUYER: Record<Country, Record<string, unknown>> = {
  AT: { company: 'Muster GmbH', vatId: 'DE136695976', address: 'Hauptstraße 5\n10115 Berlin', country: 'DE' },
  DE: { company: 'Größl & Söhne KG', vatId: 'ATU87654321', address: 'Landstraße 12\n4020 Linz', country: 'AT' },
};
const SWISS = { company: 'Zürich Trading AG', address: 'Bahnhofstrasse 1\n8001 Zürich', country: 'CH' };

interface Case {
  name: string;
  customer: Record<string, unknown>;
  item: Record<string, unknown>;
  smallBusiness?: boolean;
  /** BT-118 / BT-151. */
  code: string;
  /** BT-121, or undefined when none is written. */
  vatex?: string;
  /** In BT-120 and (but for reverse charge, see `pdf`) printed on the PDF. */
  wording: RegExp;
  /** More text the PDF must show. */
  pdf?: RegExp[];
}

function cases(c: Country): Case[] {
  const standardRate = c === 'AT' ? '20' : '19';
  const out: Case[] = [
    { name: 'standard', customer: DOMESTIC[c], item: { taxRate: standardRate }, code: 'S', wording: /./ },
    {
      name: 'exempt with a reason',
      customer: DOMESTIC[c],
      item: { taxRate: '0', taxCategory: 'exempt', exemptionReason: c === 'AT' ? 'AT-6-1-19' : 'DE-4-14a', exemptionNote: 'Laut Befund vom 3. März' },
      code: 'E',
      vatex: 'VATEX-EU-132-1C',
      wording:
        c === 'AT' ? /steuerfrei gemäß § 6 Abs\. 1 Z 19 UStG 1994\. Laut Befund vom 3\. März/ : /steuerfrei gemäß § 4 Nr\. 14 Buchst\. a UStG\. Laut Befund/,
    },
    {
      name: 'reverse charge',
      customer: EU_BUYER[c],
      item: { taxRate: '0', taxCategory: 'reverseCharge' },
      code: 'AE',
      vatex: 'VATEX-EU-AE',
      wording: c === 'AT' ? /Übergang der Steuerschuld auf den Leistungsempfänger/ : /Steuerschuldnerschaft des Leistungsempfängers \(Reverse Charge\)/,
      pdf: [/Steuerschuldnerschaft des Leistungsempfängers \/ Reverse Charge/, new RegExp(`UID des Leistungsempfängers: ${EU_BUYER[c].vatId}`)],
    },
    {
      name: 'intra-Community supply',
      customer: EU_BUYER[c],
      item: { taxRate: '0', taxCategory: 'intraCommunitySupply', description: 'Fräsmaschine' },
      code: 'K',
      vatex: 'VATEX-EU-IC',
      wording: /Steuerfreie innergemeinschaftliche Lieferung/,
      pdf: [new RegExp(`UID des Lieferers: ${SELLERS[c].vatId}\\. UID des Abnehmers: ${EU_BUYER[c].vatId}`)],
    },
    // No category given: 0 % to a buyer outside the EU is an export (G), not zero rated.
    { name: 'export (inferred)', customer: SWISS, item: { taxRate: '0' }, code: 'G', vatex: 'VATEX-EU-G', wording: /Steuerfreie Ausfuhrlieferung/ },
    {
      name: 'not subject to VAT',
      customer: SWISS,
      item: { taxRate: '0', taxCategory: 'notSubject', description: 'Beratung (Leistungsort Schweiz)' },
      code: 'O',
      vatex: 'VATEX-EU-O',
      wording: /Nicht im Inland steuerbare Leistung/,
    },
    {
      name: 'small business',
      customer: DOMESTIC[c],
      item: { taxRate: '0' },
      smallBusiness: true,
      code: 'E',
      wording:
        c === 'AT'
          ? /Umsatzsteuerbefreit – Kleinunternehmer gemäß § 6 Abs\. 1 Z 27 UStG 1994/
          : /Gemäß § 19 UStG wird keine Umsatzsteuer berechnet \(Kleinunternehmer\)/,
    },
  ];
  if (c === 'DE') {
    out.splice(1, 0, {
      name: 'zero rated',
      customer: DOMESTIC[c],
      item: { taxRate: '0', taxCategory: 'zeroRated', description: 'Photovoltaikmodul' },
      code: 'Z',
      wording: /Nullsteuersatz gemäß § 12 Abs\. 3 UStG/,
    });
  }
  return out;
}

async function sentInvoice(c: Country, k: Case) {
  const team = await createTeam(SELLERS[c]);
  const token = team.admin.token;
  if (k.smallBusiness) expect((await http.put('/api/settings', { smallBusiness: true }, { token })).status).toBe(200);
  const customer = await http.post('/api/customers', { name: 'Einkauf', email: 'einkauf@example.com', ...k.customer }, { token });
  expect(customer.status, JSON.stringify(customer.body)).toBe(201);
  const created = await http.post(
    '/api/invoices',
    {
      type: 'rechnung',
      customerId: customer.body.id,
      serviceDate: '2026-11-02',
      items: [{ description: 'Leistung', quantity: 2, unitPrice: '150.00', ...k.item }],
    },
    { token },
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const sent = await http.post(`/api/invoices/${created.body.id}/send`, {}, { token });
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  return { id: created.body.id as string, token };
}

for (const country of ['AT', 'DE'] as const) {
  describe(`documents per VAT category, ${country} seller`, () => {
    for (const k of cases(country)) {
      it.skipIf(!official)(`${k.name}: CII ${k.code} valid, ebInterface valid, PDF wording`, async () => {
        const { id, token } = await sentInvoice(country, k);

        const zugferd = await http.get(`/api/invoices/${id}/zugferd`, { token });
        expect(zugferd.status).toBe(200);
        const xml = pdfAttachments(zugferd.raw)['factur-x.xml'].toString('utf8');
        const xsd = validateXml(xml, CII_XSD);
        expect(xsd.errors).toBe('');
        expect(validateXml(xml, CII_D16B_XSD).valid).toBe(true);
        expect(checkEn16931(xml)).toEqual([]);
        const cii = parser.parse(xml).CrossIndustryInvoice;
        const tx = cii.SupplyChainTradeTransaction;
        const line = asArray(tx.IncludedSupplyChainTradeLineItem)[0];
        expect(line.SpecifiedLineTradeSettlement.ApplicableTradeTax.CategoryCode).toBe(k.code);
        const groups = asArray(tx.ApplicableHeaderTradeSettlement.ApplicableTradeTax);
        expect(groups).toHaveLength(1);
        const g = groups[0];
        expect(g.CategoryCode).toBe(k.code);
        if (k.code === 'S') {
          expect(g.ExemptionReason).toBeUndefined();
          expect(g.CalculatedAmount).toBe(country === 'AT' ? '60.00' : '57.00');
        } else {
          expect(g.CalculatedAmount).toBe('0.00');
          if (k.code !== 'Z') expect(g.ExemptionReason).toMatch(k.wording);
          else expect(g.ExemptionReason).toBeUndefined();
          expect(g.ExemptionReasonCode).toBe(k.vatex);
        }
        if (k.code === 'O') {
          // BR-O-02/05: no VAT identifiers, no rate.
          expect(xml).not.toContain('schemeID="VA"');
          expect(g.RateApplicablePercent).toBeUndefined();
        }
        if (k.code === 'K') expect(tx.ApplicableHeaderTradeDelivery.ShipToTradeParty.PostalTradeAddress.CountryID).toBe(EU_BUYER[country].country);

        const text = flat(pdfText(zugferd.raw));
        // Reverse charge keeps its own paragraph (title, rule, buyer's UID) on the PDF.
        if (k.code !== 'S' && k.code !== 'AE') expect(text).toMatch(k.wording);
        for (const re of k.pdf ?? []) expect(text).toMatch(re);
        if (k.smallBusiness) {
          expect(text).not.toMatch(/USt 0 %/);
          expect(text).not.toContain('Summe USt');
        }
        if (k.code === 'S') expect(text).not.toContain('Hinweise zur Umsatzsteuer');

        const ebi = await http.get(`/api/invoices/${id}/ebinterface`, { token });
        expect(ebi.status, String(ebi.body)).toBe(200);
        const v = validateXml(ebi.raw, EBI_XSD);
        expect(v.errors).toBe('');
        const inv = parser.parse(ebi.raw.toString('utf8')).Invoice;
        const item = asArray(inv.Tax.TaxItem)[0];
        expect(item.TaxPercent['@_TaxCategoryCode']).toBe(k.code);
        expect(asArray(inv.Details.ItemList.ListLineItem)[0].TaxItem.TaxPercent['@_TaxCategoryCode']).toBe(k.code);
        if (k.code !== 'S' && k.code !== 'Z') expect(item.Comment).toMatch(k.wording);
      });
    }
  });
}

describe('documents of a foreign-currency invoice state the VAT in EUR', () => {
  it.skipIf(!official)('USD with a manual rate: CII BT-6/BT-111, ebInterface exchange information, PDF line', async () => {
    const team = await createTeam(SELLERS.AT);
    const token = team.admin.token;
    // With its UID: finalization compares a foreign-currency total with the EUR 10,000 limit only in EUR.
    const customer = await http.post('/api/customers', { name: 'Einkauf', email: 'einkauf@example.com', ...DOMESTIC.AT, vatId: 'ATU87654321' }, { token });
    const created = await http.post(
      '/api/invoices',
      {
        type: 'rechnung',
        customerId: customer.body.id,
        currency: 'USD',
        exchangeRate: { rate: '1.0867', date: '2026-11-02', source: 'manual' },
        items: [{ description: 'Lizenz', quantity: 2, unitPrice: '100.00', taxRate: '20' }],
      },
      { token },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const sent = await http.post(`/api/invoices/${created.body.id}/send`, {}, { token });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);

    const zugferd = await http.get(`/api/invoices/${created.body.id}/zugferd`, { token });
    expect(zugferd.status).toBe(200);
    const xml = pdfAttachments(zugferd.raw)['factur-x.xml'].toString('utf8');
    expect(validateXml(xml, CII_XSD).errors).toBe('');
    expect(checkEn16931(xml)).toEqual([]);
    expect(xml).toContain('<ram:TaxCurrencyCode>EUR</ram:TaxCurrencyCode>');
    expect(xml).toContain('<ram:TaxTotalAmount currencyID="EUR">36.81</ram:TaxTotalAmount>');
    expect(flat(pdfText(zugferd.raw))).toContain('USt. in EUR: 36,81 € (Kurs 1 EUR = 1,0867 USD vom 02.11.2026)');

    const ebi = await http.get(`/api/invoices/${created.body.id}/ebinterface`, { token });
    expect(ebi.status).toBe(200);
    expect(validateXml(ebi.raw, EBI_XSD).errors).toBe('');
    expect(ebi.raw.toString('utf8')).toContain('<AccountingCurrencyAmount Currency="EUR">36.81</AccountingCurrencyAmount>');
  });
});
