/**
 * Issue 28, "Done when": our XRechnung UBL, XRechnung CII and Peppol UBL outputs for a domestic,
 * a reverse-charge, a mixed-rate invoice and a credit note are XSD-valid and pass the rule
 * checker — the whole matrix through the API (a German seller, as the invoices leave the
 * service). The writers' own tests cover the same cases from hand-made documents
 * (test/formats/ubl/ublInvoice.test.ts, with EN 16931 on the model); xrechnungCii.test.ts and
 * peppolUbl.test.ts what each document says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkEn16931 } from '../../../shared/formats/cii/en16931Rules';
import { checkUblRules } from '../../../shared/formats/ubl/ublRules';
import { checkXRechnungCii } from '../../../shared/formats/xrechnung/xrechnungCii';
import { startWorkers, type RunningWorkers } from '../../../workers/worker';
import { CII_D16B_XSD_FILE } from '../../formats/cii/fixtures';
import { createTeam } from '../../helpers/factories';
import { needsOfficialFiles, type OfficialFile, officialPath } from '../../helpers/officialFiles';
import { useTestServer } from '../../helpers/server';
import { validateXml } from '../../helpers/xmllint';

const UBL_INVOICE_XSD: OfficialFile = 'schemas:ubl-2.1/maindoc/UBL-Invoice-2.1.xsd';
const UBL_CREDIT_NOTE_XSD: OfficialFile = 'schemas:ubl-2.1/maindoc/UBL-CreditNote-2.1.xsd';
const official = needsOfficialFiles([UBL_INVOICE_XSD, UBL_CREDIT_NOTE_XSD, CII_D16B_XSD_FILE]);

const env = useTestServer({ RENDER_WAIT_MS: '60000' });
let workers: RunningWorkers;
beforeAll(async () => {
  workers = await startWorkers({ queues: ['documents'], schedule: false });
});
afterAll(async () => workers?.close());

const SELLER = {
  country: 'DE',
  name: 'Spree Software GmbH',
  vatId: 'DE123456789',
  taxNumber: '9198011310010',
  address: 'Musterstraße 1\n10115 Berlin',
  email: 'rechnung@spree.example',
  iban: 'DE89370400440532013000',
  bic: 'COBADEFFXXX',
};
const CONTACT = { contactName: 'Erika Muster', contactPhone: '+49 30 1234567', contactEmail: 'rechnung@spree.example' };
const DE_BUYER = {
  company: 'Kunden AG Mitte',
  vatId: 'DE136695976',
  address: 'Kundenstraße 15\n60311 Frankfurt am Main',
  country: 'DE',
  email: 'eingang@kunden-ag.example',
  buyerReference: 'KST-4711',
};
const AT_BUYER = {
  company: 'Größl & Söhne KG',
  vatId: 'ATU87654321',
  address: 'Landstraße 12\n4020 Linz',
  country: 'AT',
  email: 'office@groessl.example',
  buyerReference: 'Bestellung Linz 7',
};

type Output = 'xrechnung-ubl' | 'xrechnung-cii' | 'peppol-ubl';
const ROUTE: Record<Output, string> = { 'xrechnung-ubl': 'xrechnung?syntax=ubl', 'xrechnung-cii': 'xrechnung?syntax=cii', 'peppol-ubl': 'ubl' };

/** The document's violations: the official XSD, then our rule checker for its syntax and profile. */
function problems(output: Output, xml: string, creditNote: boolean): unknown[] {
  if (output === 'xrechnung-cii') {
    const xsd = validateXml(xml, officialPath(CII_D16B_XSD_FILE));
    return [...(xsd.valid ? [] : [xsd.errors]), ...checkEn16931(xml), ...checkXRechnungCii(xml)];
  }
  const xsd = validateXml(xml, officialPath(creditNote ? UBL_CREDIT_NOTE_XSD : UBL_INVOICE_XSD));
  return [...(xsd.valid ? [] : [xsd.errors]), ...checkUblRules(xml, output === 'peppol-ubl' ? 'peppol' : 'xrechnung')];
}

const cases: Record<string, { id: string; creditNote: boolean; category: string[] }> = {};
let token: string;

describe.skipIf(!official)('XRechnung UBL / CII and Peppol UBL of a German seller, through the API', () => {
  beforeAll(async () => {
    const team = await createTeam(SELLER);
    token = team.admin.token;
    expect((await env.http.put('/api/settings', CONTACT, { token })).status).toBe(200);
    const customer = async (body: Record<string, unknown>) =>
      (await env.http.post('/api/customers', { name: 'Einkauf', ...body }, { token })).body.id as string;
    const de = await customer(DE_BUYER);
    const at = await customer(AT_BUYER);
    const finalized = async (customerId: string, items: Array<Record<string, unknown>>) => {
      const created = await env.http.post(
        '/api/invoices',
        { type: 'rechnung', customerId, serviceDate: '2026-11-02', orderReference: 'PO-12', items },
        { token },
      );
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect((await env.http.post(`/api/invoices/${created.body.id}/send`, {}, { token })).status).toBe(202);
      return created.body.id as string;
    };
    cases.domestic = {
      id: await finalized(de, [{ description: 'Wartung', quantity: 3, unit: 'h', unitPrice: '120.00', taxRate: '19' }]),
      creditNote: false,
      category: ['S'],
    };
    cases['reverse charge'] = {
      id: await finalized(at, [{ description: 'Beratung', quantity: 8, unit: 'h', unitPrice: '120.00', taxRate: '0', taxCategory: 'reverseCharge' }]),
      creditNote: false,
      category: ['AE'],
    };
    const mixed = [
      { description: 'Softwareentwicklung', quantity: 12.5, unit: 'h', unitPrice: '95.00', taxRate: '19' },
      { description: 'Fachbuch', quantity: 3, unitPrice: '39.90', taxRate: '7' },
    ];
    cases['mixed rates 19/7'] = { id: await finalized(de, mixed), creditNote: false, category: ['S', 'S'] };
    const cancelled = await env.http.post(`/api/invoices/${await finalized(de, mixed)}/cancel`, {}, { token });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    cases['credit note (Storno of a 19/7 invoice)'] = { id: cancelled.body.creditNote.id, creditNote: true, category: ['S', 'S'] };
  }, 120_000);

  for (const output of ['xrechnung-ubl', 'xrechnung-cii', 'peppol-ubl'] as const) {
    for (const name of ['domestic', 'reverse charge', 'mixed rates 19/7', 'credit note (Storno of a 19/7 invoice)']) {
      it(`${output}: ${name}`, async () => {
        const { id, creditNote, category } = cases[name];
        const res = await env.http.get(`/api/invoices/${id}/${ROUTE[output]}`, { token });
        expect(res.status, res.raw.toString('utf8').slice(0, 500)).toBe(200);
        const xml = res.raw.toString('utf8');
        expect(problems(output, xml, creditNote)).toEqual([]);
        // The case is the one named: root / type code and the VAT categories of the breakdown.
        if (output === 'xrechnung-cii') {
          expect(xml).toContain(`<ram:TypeCode>${creditNote ? '381' : '380'}</ram:TypeCode>`);
        } else {
          expect(xml).toMatch(creditNote ? /^<\?xml[^>]*>\s*<CreditNote / : /^<\?xml[^>]*>\s*<Invoice /);
        }
        const categories = [
          ...xml.matchAll(
            output === 'xrechnung-cii' ? /<ram:CategoryCode>(\w+)<\/ram:CategoryCode>/g : /<cac:TaxSubtotal>[\s\S]*?<cac:TaxCategory>\s*<cbc:ID>(\w+)</g,
          ),
        ].map((m) => m[1]);
        expect(new Set(categories)).toEqual(new Set(category));
        if (output !== 'xrechnung-cii') expect(categories).toHaveLength(category.length);
      });
    }
  }
});
