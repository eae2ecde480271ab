/**
 * Issue 28, "round trip": every e-invoice we write, imported into another tenant, becomes an
 * incoming invoice with the same totals. Through the real API and real workers: finalized sales
 * invoices of tenant A, each output downloaded (ZUGFeRD PDF, XRechnung UBL and CII, Peppol UBL,
 * ebInterface) and uploaded to POST /api/incoming-einvoices of tenant B, the buyer.
 *
 * One buyer tenant per output format: the same invoice in a second format is (rightly) a duplicate
 * of the first (same supplier and number, docs/e-invoicing-inbound.md). Each buyer tenant is in
 * the country of the rates it receives (a DE buyer for 19/7 %, an AT buyer for 20/10 % and for the
 * 0 % reverse charge / intra-Community supply), so no case depends on importing foreign VAT.
 */
import Decimal from 'decimal.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { useWorkers } from '../../helpers/workers';
import { createTeam } from '../../helpers/factories';
import { useTestServer } from '../../helpers/server';
import { uploadAndSettle } from '../../helpers/incomingEinvoices';
import { SPREE_SELLER } from '../../helpers/einvoiceParties';

const env = useTestServer({ RENDER_WAIT_MS: '60000' });
// documents: rendering and the import job; maintenance: the outbox relay that queues the import.
useWorkers(['documents', 'maintenance']);

type Team = Awaited<ReturnType<typeof createTeam>>;

/** The outputs we write, each with its route and the media type it is uploaded with. */
const OUTPUTS = [
  { name: 'ZUGFeRD PDF', path: 'zugferd', type: 'application/pdf', format: 'facturx-pdf' },
  { name: 'XRechnung UBL', path: 'xrechnung?syntax=ubl', type: 'application/xml', format: 'ubl' },
  { name: 'XRechnung CII', path: 'xrechnung?syntax=cii', type: 'application/xml', format: 'cii' },
  { name: 'Peppol UBL', path: 'ubl', type: 'application/xml', format: 'ubl' },
  { name: 'ebInterface', path: 'ebinterface', type: 'application/xml', format: 'ebinterface' },
] as const;
type Output = (typeof OUTPUTS)[number];

const DE_SELLER = { ...SPREE_SELLER, email: 'rechnung@spree.example' };
const AT_SELLER = {
  country: 'AT',
  name: 'Alpen Software GmbH',
  vatId: 'ATU12345678',
  taxNumber: '12-345/6789',
  address: 'Mariahilfer Straße 1\n1060 Wien',
  email: 'office@alpen.example',
  iban: 'AT611904300234573201',
  bic: 'BKAUATWW',
};
/** The buyers; each is a customer of the seller and, as a tenant of its own, the importer. */
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
const CONTACT = { contactName: 'Erika Muster', contactPhone: '+49 30 1234567', contactEmail: 'buchhaltung@seller.example' };

interface Sale {
  case: string;
  seller: 'DE' | 'AT';
  buyer: 'DE' | 'AT';
  id: string;
  view: Record<string, any>;
}

async function sellerTeam(data: Record<string, unknown>): Promise<Team> {
  const team = await createTeam(data);
  const res = await env.http.put('/api/settings', CONTACT, { token: team.admin.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return team;
}

async function customer(team: Team, body: Record<string, unknown>): Promise<string> {
  const res = await env.http.post('/api/customers', { name: 'Einkauf', ...body }, { token: team.admin.token });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

async function finalized(team: Team, customerId: string, items: Array<Record<string, unknown>>): Promise<string> {
  const token = team.admin.token;
  const created = await env.http.post('/api/invoices', { type: 'rechnung', customerId, serviceDate: '2026-11-02', orderReference: 'PO-12', items }, { token });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const sent = await env.http.post(`/api/invoices/${created.body.id}/send`, {}, { token });
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  return created.body.id;
}

const view = async (team: Team, id: string) => {
  const res = await env.http.get(`/api/invoices/${id}`, { token: team.admin.token });
  expect(res.status).toBe(200);
  return res.body;
};

async function download(team: Team, id: string, output: Output): Promise<Buffer> {
  const res = await env.http.get(`/api/invoices/${id}/${output.path}`, { token: team.admin.token });
  expect(res.status, `${output.name} of ${id}: ${res.status} ${res.raw.toString('utf8').slice(0, 500)}`).toBe(200);
  return res.raw;
}

/** Upload to the buyer tenant and wait until the import job has settled the row. */
async function imported(buyer: Team, bytes: Buffer, output: Output) {
  return uploadAndSettle(env.http, buyer, bytes, output.type, `the import of ${output.name}`);
}

const eq = (a: string, b: string) => new Decimal(a).eq(b);

const sales: Sale[] = [];
let sellerDE: Team;
let sellerAT: Team;
/** Buyer tenants by output name and country. */
const buyers = new Map<string, Team>();
const buyerOf = (output: Output, country: 'DE' | 'AT') => buyers.get(`${output.name}/${country}`)!;

beforeAll(async () => {
  sellerDE = await sellerTeam(DE_SELLER);
  sellerAT = await sellerTeam(AT_SELLER);
  for (const output of OUTPUTS) {
    for (const [country, b] of [
      ['DE', DE_BUYER],
      ['AT', AT_BUYER],
    ] as const) {
      buyers.set(`${output.name}/${country}`, await createTeam({ name: b.company, country, vatId: b.vatId, address: b.address }));
    }
  }
  const deCustomer = await customer(sellerDE, DE_BUYER);
  const atCustomerOfDE = await customer(sellerDE, AT_BUYER);
  const atCustomerOfAT = await customer(sellerAT, AT_BUYER);

  const domestic = await finalized(sellerDE, deCustomer, [
    { description: 'Softwareentwicklung', quantity: 12.5, unit: 'h', unitPrice: '95.00', taxRate: '19' },
    { description: 'Fachbuch', quantity: 3, unitPrice: '39.90', taxRate: '7' },
    { description: 'Versand', quantity: 2.75, unit: 'kg', unitPrice: '1.99', taxRate: '19' },
  ]);
  sales.push({ case: 'DE domestic 19 % + 7 %', seller: 'DE', buyer: 'DE', id: domestic, view: await view(sellerDE, domestic) });
  const rc = await finalized(sellerDE, atCustomerOfDE, [
    { description: 'Beratung', quantity: 8, unit: 'h', unitPrice: '120.00', taxRate: '0', taxCategory: 'reverseCharge' },
  ]);
  sales.push({ case: 'DE → AT reverse charge', seller: 'DE', buyer: 'AT', id: rc, view: await view(sellerDE, rc) });
  const ic = await finalized(sellerDE, atCustomerOfDE, [
    { description: 'Server-Hardware', quantity: 2, unitPrice: '1450.00', taxRate: '0', taxCategory: 'intraCommunitySupply' },
  ]);
  sales.push({ case: 'DE → AT intra-Community supply', seller: 'DE', buyer: 'AT', id: ic, view: await view(sellerDE, ic) });
  // The credit note: a Storno of a second domestic invoice (the first stays open for the other cases).
  const cancelledId = await finalized(sellerDE, deCustomer, [
    { description: 'Wartung', quantity: 1, unitPrice: '500.00', taxRate: '19' },
    { description: 'Zeitschrift', quantity: 2, unitPrice: '12.50', taxRate: '7' },
  ]);
  const cancelled = await env.http.post(`/api/invoices/${cancelledId}/cancel`, {}, { token: sellerDE.admin.token });
  expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
  const creditNote = cancelled.body.creditNote.id as string;
  sales.push({ case: 'DE credit note (Storno)', seller: 'DE', buyer: 'DE', id: creditNote, view: await view(sellerDE, creditNote) });
  const at = await finalized(sellerAT, atCustomerOfAT, [
    { description: 'Softwarelizenz', quantity: 4, unitPrice: '249.00', taxRate: '20' },
    { description: 'Handbuch', quantity: 4, unitPrice: '29.90', taxRate: '10' },
  ]);
  sales.push({ case: 'AT domestic 20 % + 10 %', seller: 'AT', buyer: 'AT', id: at, view: await view(sellerAT, at) });
}, 120_000);

describe('our e-invoices imported by the buyer', () => {
  const cases = ['DE domestic 19 % + 7 %', 'DE → AT reverse charge', 'DE → AT intra-Community supply', 'DE credit note (Storno)', 'AT domestic 20 % + 10 %'];
  for (const output of OUTPUTS) {
    for (const name of cases) {
      it(`${output.name}: ${name}`, async () => {
        const sale = sales.find((s) => s.case === name)!;
        const sellerTeam = sale.seller === 'DE' ? sellerDE : sellerAT;
        const seller = sale.seller === 'DE' ? DE_SELLER : AT_SELLER;
        const buyer = buyerOf(output, sale.buyer);
        const bytes = await download(sellerTeam, sale.id, output);
        const row = await imported(buyer, bytes, output);
        expect(row, JSON.stringify(row)).toMatchObject({ status: 'imported', format: output.format, valid: true, errors: [] });

        const incoming = await view(buyer, row.invoiceId);
        const sold = sale.view;
        expect(incoming.type).toBe('eingangsrechnung');
        // The same totals to the cent. Our sales credit note (a Storno) keeps positive amounts and
        // the document says "credit note"; the buyer books it as a negative incoming invoice.
        const sign = sold.type === 'gutschrift' ? -1 : 1;
        for (const field of ['totalNet', 'totalTax', 'totalGross'] as const) {
          const expected = new Decimal(sold[field]).times(sign).toFixed(2);
          expect(eq(incoming[field], expected), `${field}: incoming ${incoming[field]}, sold ${sold[field]}`).toBe(true);
        }
        if (sold.type === 'gutschrift') {
          expect(new Decimal(sold.totalGross).isPositive()).toBe(true);
          expect(new Decimal(incoming.totalGross).isNegative()).toBe(true);
          expect(incoming.notes ?? '').toContain(sold.relatedInvoiceNumber);
        }
        // Number and dates carry over.
        expect(incoming.invoiceNumber).toBe(sold.number);
        expect(incoming.invoiceDate).toBe(sold.issueDate);
        if (sold.type !== 'gutschrift') expect(incoming.dueDate).toBe(sold.dueDate);
        // The supplier is the seller: created by the first import, matched by VAT ID after that.
        const suppliers = await db()('suppliers').where({ tenantId: buyer.tenant.id, vatId: seller.vatId });
        expect(suppliers).toHaveLength(1);
        expect(incoming.supplierId).toBe(suppliers[0].id);
        expect(suppliers[0].name).toBe(seller.name);
      });
    }
  }
});
