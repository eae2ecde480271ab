/**
 * Issue 28, "Out" item 3: POST …/send attaches the e-invoice format the user wants, through the
 * real API, the real e-mail worker and a real SMTP server. Format precedence (request > customer >
 * tenant's zugferdByDefault > pdf), the attachments of each format (the XML parsed: root and
 * namespace), the refusal before anything is finalized, and the format stored for retries.
 */
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server';
import { client, type TestClient } from '../helpers/http';
import { createTeam } from '../helpers/factories';
import { startFakeSmtp, type FakeSmtp } from '../helpers/fakeSmtp';
import { mailAttachments } from '../helpers/mailAttachments';
import { startWorkers, type RunningWorkers } from '../../workers/worker';
import { reloadConfig } from '../../shared/config';
import { db } from '../../shared/db';
import { validateXml } from '../helpers/xmllint';
import { needsOfficialFiles, officialPath, type OfficialFile } from '../helpers/officialFiles';
import { detachList } from '../formats/pdf/pdfTools';
import { CII_D16B_XSD_FILE, EBI_XSD_FILE } from '../formats/cii/fixtures';
import { EBINTERFACE_61_NAMESPACE } from '../../shared/formats/ebinterface/ebInterfaceInvoice';
import { SPREE_SELLER, POTSDAM_BUYER } from '../helpers/einvoiceParties';

const UBL_INVOICE_XSD: OfficialFile = 'schemas:ubl-2.1/maindoc/UBL-Invoice-2.1.xsd';
const official = needsOfficialFiles([UBL_INVOICE_XSD, CII_D16B_XSD_FILE, EBI_XSD_FILE]);

const UBL_INVOICE_NS = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2';
const CII_NS = 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100';

let smtp: FakeSmtp;
let server: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;
let http: TestClient;

beforeAll(async () => {
  smtp = await startFakeSmtp();
  process.env.SMTP_URL = smtp.url;
  process.env.SMTP_FROM = 'Spree Software <rechnung@spree.example>';
  reloadConfig();
  server = await startTestServer();
  workers = await startWorkers({ queues: ['email'], schedule: false });
  http = client(server.url);
});
afterAll(async () => {
  await workers.close();
  await server.close();
  await smtp.close();
});

const DE_SELLER = SPREE_SELLER;
const CONTACT = { contactName: 'Erika Muster', contactPhone: '+49 30 1234567', contactEmail: 'rechnung@spree.example' };
const PUBLIC_BUYER = { name: 'Einkauf', ...POTSDAM_BUYER };
const AT_SELLER = { country: 'AT', name: 'Alpen Software GmbH', vatId: 'ATU12345678', address: 'Mariahilfer Straße 1\n1060 Wien' };
const AT_BUYER = {
  name: 'Einkauf',
  company: 'Größl & Söhne KG',
  vatId: 'ATU87654321',
  address: 'Landstraße 12\n4020 Linz',
  country: 'AT',
  email: 'office@groessl.example',
};

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseTagValue: false });

async function seller(tenant: Record<string, unknown> = DE_SELLER, opts: { contact?: boolean } = {}) {
  const team = await createTeam(tenant);
  const token = team.admin.token;
  if (opts.contact !== false) expect((await http.put('/api/settings', CONTACT, { token })).status).toBe(200);
  return { team, token };
}

async function customer(token: string, body: Record<string, unknown>) {
  const res = await http.post('/api/customers', body, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

async function draft(token: string, customerId: string, extra: Record<string, unknown> = {}) {
  const res = await http.post(
    '/api/invoices',
    {
      type: 'rechnung',
      customerId,
      serviceDate: '2026-11-02',
      items: [{ description: 'Leistung', quantity: 2, unitPrice: '150.00', taxRate: '19' }],
      ...extra,
    },
    { token },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

async function waitForDelivery(id: string) {
  for (let i = 0; i < 600; i++) {
    const row = await db()('deliveries').where({ id }).first();
    if (row.status === 'sent' || row.status === 'failed') return row;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`delivery ${id} never finished`);
}

/** POST …/send, wait for the worker, and return the one mail's attachments. */
async function sendAndReceive(token: string, invoiceId: string, body: Record<string, unknown> = {}) {
  const res = await http.post(`/api/invoices/${invoiceId}/send`, body, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const row = await waitForDelivery(res.body.delivery.id);
  expect(row.status, row.error).toBe('sent');
  const mails = smtp.received.filter((m) => m.raw.includes(`delivery-${row.id}@`));
  expect(mails).toHaveLength(1);
  const number = res.body.invoice.number as string;
  return { res, row, number, attachments: mailAttachments(mails[0].raw) };
}

function xmlAttachment(attachments: ReturnType<typeof mailAttachments>, number: string) {
  expect(attachments.map((a) => [a.filename, a.contentType])).toEqual([
    [`${number}.pdf`, 'application/pdf'],
    [`${number}.xml`, 'application/xml'],
  ]);
  expect(attachments[0].content.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  return attachments[1].content.toString('utf8');
}

const rootOf = (xml: string) => {
  const doc = parser.parse(xml);
  const name = Object.keys(doc).find((k) => k !== '?xml')!;
  const root = doc[name];
  const prefix = name.includes(':') ? name.split(':')[0] : null;
  return { name: name.replace(/^.*:/, ''), namespace: root[prefix ? `@_xmlns:${prefix}` : '@_xmlns'], root };
};

describe('send attaches the chosen e-invoice format', () => {
  it.skipIf(!official)("the customer's einvoiceFormat xrechnung-ubl: the PDF plus <number>.xml, a UBL Invoice (XRechnung 3.0), XSD-valid", async () => {
    const { token } = await seller();
    const cid = await customer(token, { ...PUBLIC_BUYER, einvoiceFormat: 'xrechnung-ubl' });
    const { res, row, number, attachments } = await sendAndReceive(token, await draft(token, cid));
    expect(res.body.delivery.format).toBe('xrechnung-ubl');
    expect(row).toMatchObject({ format: 'xrechnung-ubl', formatSource: 'customer', error: null });
    const xml = xmlAttachment(attachments, number);
    const { name, namespace, root } = rootOf(xml);
    expect([name, namespace]).toEqual(['Invoice', UBL_INVOICE_NS]);
    expect(root['cbc:CustomizationID']).toMatch(/xrechnung_3\.0$/);
    expect(root['cbc:ID']).toBe(number);
    expect(root['cbc:BuyerReference']).toBe('04011000-12345-03');
    expect(validateXml(xml, officialPath(UBL_INVOICE_XSD)).errors).toBe('');
  });

  it.skipIf(!official)("an explicit format beats the customer's default: xrechnung-cii instead of xrechnung-ubl", async () => {
    const { token } = await seller();
    const cid = await customer(token, { ...PUBLIC_BUYER, einvoiceFormat: 'xrechnung-ubl' });
    const { row, number, attachments } = await sendAndReceive(token, await draft(token, cid), { format: 'xrechnung-cii' });
    expect(row).toMatchObject({ format: 'xrechnung-cii', formatSource: 'request' });
    const xml = xmlAttachment(attachments, number);
    const { name, namespace, root } = rootOf(xml);
    expect([name, namespace]).toEqual(['CrossIndustryInvoice', CII_NS]);
    expect(root['rsm:ExchangedDocumentContext']['ram:GuidelineSpecifiedDocumentContextParameter']['ram:ID']).toMatch(/xrechnung_3\.0$/);
    expect(validateXml(xml, officialPath(CII_D16B_XSD_FILE)).errors).toBe('');
  });

  it.skipIf(!official)('peppol-ubl: the PDF plus a Peppol BIS Billing 3.0 UBL Invoice with both electronic addresses', async () => {
    const { token } = await seller();
    const cid = await customer(token, PUBLIC_BUYER);
    const { row, number, attachments } = await sendAndReceive(token, await draft(token, cid), { format: 'peppol-ubl' });
    expect(row.format).toBe('peppol-ubl');
    const xml = xmlAttachment(attachments, number);
    const { name, namespace, root } = rootOf(xml);
    expect([name, namespace]).toEqual(['Invoice', UBL_INVOICE_NS]);
    expect(root['cbc:CustomizationID']).toMatch(/poacc:billing:3\.0$/);
    expect(root['cac:AccountingCustomerParty']['cac:Party']['cbc:EndpointID']).toEqual({ '#text': '04011000-12345-03', '@_schemeID': '0204' });
    expect(validateXml(xml, officialPath(UBL_INVOICE_XSD)).errors).toBe('');
  });

  it.skipIf(!official)('ebinterface with order and buyer reference: the PDF plus an XSD-valid ebInterface 6.1 Invoice', async () => {
    const { token } = await seller(AT_SELLER, { contact: false });
    const cid = await customer(token, { ...AT_BUYER, buyerReference: 'Abteilung IT/3', einvoiceFormat: 'ebinterface' });
    const id = await draft(token, cid, { orderReference: 'PO-4711', items: [{ description: 'Wartung', quantity: 1, unitPrice: '100.00', taxRate: '20' }] });
    const { row, number, attachments } = await sendAndReceive(token, id);
    expect(row).toMatchObject({ format: 'ebinterface', formatSource: 'customer' });
    const xml = xmlAttachment(attachments, number);
    const { name, namespace, root } = rootOf(xml);
    expect([name, namespace]).toEqual(['Invoice', EBINTERFACE_61_NAMESPACE]);
    expect(root.InvoiceRecipient.OrderReference).toEqual({ OrderID: 'PO-4711' });
    expect(root.InvoiceRecipient.SubOrganizationID).toBe('Abteilung IT/3');
    expect(validateXml(xml, officialPath(EBI_XSD_FILE)).errors).toBe('');
  });

  it('zugferd: the ZUGFeRD PDF alone; pdf: the plain PDF alone, whatever the customer wants', async () => {
    const { token } = await seller();
    const cid = await customer(token, { ...PUBLIC_BUYER, einvoiceFormat: 'xrechnung-ubl' });
    const z = await sendAndReceive(token, await draft(token, cid), { format: 'zugferd' });
    expect(z.attachments.map((a) => [a.filename, a.contentType])).toEqual([[`${z.number}.zugferd.pdf`, 'application/pdf']]);
    expect(detachList(z.attachments[0].content)).toEqual(['factur-x.xml']);
    const p = await sendAndReceive(token, await draft(token, cid), { format: 'pdf' });
    expect(p.row).toMatchObject({ format: 'pdf', formatSource: 'request' });
    expect(p.attachments.map((a) => a.filename)).toEqual([`${p.number}.pdf`]);
    expect(detachList(p.attachments[0].content)).toEqual([]);
  });

  it("without format or customer default: the tenant's zugferdByDefault, else the plain PDF", async () => {
    const { token } = await seller();
    const cid = await customer(token, PUBLIC_BUYER);
    const plain = await sendAndReceive(token, await draft(token, cid));
    expect(plain.row).toMatchObject({ format: 'pdf', formatSource: 'default' });
    expect(plain.attachments.map((a) => a.filename)).toEqual([`${plain.number}.pdf`]);
    expect((await http.put('/api/settings', { zugferdByDefault: true }, { token })).status).toBe(200);
    const z = await sendAndReceive(token, await draft(token, cid));
    expect(z.row).toMatchObject({ format: 'zugferd', formatSource: 'tenant' });
    expect(z.attachments.map((a) => a.filename)).toEqual([`${z.number}.zugferd.pdf`]);
  });

  it('a re-send of a finalized invoice takes the format too, and a temporary SMTP failure retries with the same attachments', async () => {
    const { token } = await seller();
    const cid = await customer(token, PUBLIC_BUYER);
    const first = await sendAndReceive(token, await draft(token, cid));
    smtp.failNext(1, 451);
    const again = await sendAndReceive(token, first.res.body.invoice.id, { format: 'xrechnung-ubl' });
    expect(again.number).toBe(first.number);
    expect(again.row).toMatchObject({ attempts: 2, format: 'xrechnung-ubl' });
    const xml = xmlAttachment(again.attachments, again.number);
    // The attachment is the cached document of the invoice's version: what GET …/xrechnung serves.
    const cached = await db()('documents').where({ invoiceId: first.res.body.invoice.id, kind: 'xrechnung-ubl' }).first('content');
    expect(xml).toBe(cached.content.toString('utf8'));
  });
});

describe('send refuses a format the invoice cannot make valid, before anything is finalized', () => {
  it('XRechnung for a customer without buyer reference, a seller without contact: 400 with the BR-DE ids, the invoice stays a draft, nothing queued', async () => {
    const { team, token } = await seller(DE_SELLER, { contact: false });
    const { buyerReference: _b, peppolId: _p, ...noReference } = PUBLIC_BUYER;
    const cid = await customer(token, { ...noReference, einvoiceFormat: 'xrechnung-cii' });
    const id = await draft(token, cid);
    const before = smtp.received.length;

    for (const body of [{}, { format: 'xrechnung-ubl' }]) {
      const res = await http.post(`/api/invoices/${id}/send`, body, { token });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_INPUT');
      const rules = res.body.error.violations.map((v: { rule: string }) => v.rule);
      expect(rules).toEqual(expect.arrayContaining(['BR-DE-15']));
      // Each message says what to fill in, as the GET routes' refusals do.
      expect(res.body.error.violations.find((v: { rule: string }) => v.rule === 'BR-DE-15').message).toMatch(/buyerReference/);
      expect(res.body.error.message).toMatch(/not finalized/);
    }
    // The customer's default (CII): the contact name is missing too (BR-DE-5; UBL falls back to the
    // seller's name), and the message says how to send the PDF alone.
    const cii = await http.post(`/api/invoices/${id}/send`, {}, { token });
    expect(cii.body.error.violations.map((v: { rule: string }) => v.rule)).toEqual(expect.arrayContaining(['BR-DE-15', 'BR-DE-5']));
    expect(cii.body.error.message).toMatch(/send with format "pdf"/);
    const ubl = await http.post(`/api/invoices/${id}/send`, { format: 'xrechnung-ubl' }, { token });
    expect(ubl.body.error.violations.find((v: { rule: string }) => v.rule === 'BR-DE-6').message).toMatch(/contactPhone/);

    const view = await http.get(`/api/invoices/${id}`, { token });
    expect(view.body).toMatchObject({ status: 'entwurf', number: null });
    expect(await db()('deliveries').where({ invoiceId: id })).toEqual([]);
    expect(await db()('outbox').whereRaw("payload->>'tenantId' = ?", [team.tenant.id])).toEqual([]);
    expect(smtp.received.length).toBe(before);

    // The PDF alone can still go out, and the refused attempts took no number: the series is gapless.
    const sent = await sendAndReceive(token, id, { format: 'pdf' });
    expect(sent.number).toMatch(/-0*1$/);
  });

  it('a quote is sent as PDF: an e-invoice format is 400 on format; a customer default does not apply', async () => {
    const { token } = await seller();
    const cid = await customer(token, { ...PUBLIC_BUYER, einvoiceFormat: 'xrechnung-ubl' });
    const quote = await draft(token, cid, { type: 'angebot' });
    const res = await http.post(`/api/invoices/${quote}/send`, { format: 'xrechnung-ubl' }, { token });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'format' })]);
    const ok = await sendAndReceive(token, quote);
    expect(ok.row).toMatchObject({ format: 'pdf', formatSource: 'default' });
    expect(ok.attachments.map((a) => a.filename)).toEqual([`${ok.number}.pdf`]);
  });

  it('an unknown format is 400 INVALID_INPUT', async () => {
    const { token } = await seller();
    const id = await draft(token, await customer(token, PUBLIC_BUYER));
    const res = await http.post(`/api/invoices/${id}/send`, { format: 'xml' }, { token });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_INPUT');
  });
});
