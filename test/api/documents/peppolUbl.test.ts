/**
 * Issue 28, item 2 through the API: GET /api/invoices/:id/ubl is Peppol BIS Billing 3.0 UBL for a
 * finalized invoice and its Storno credit note, valid against the UBL 2.1 XSDs and our rule check,
 * with both parties' electronic addresses.
 */
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkers, type RunningWorkers } from '../../../workers/worker';
import { checkUblRules } from '../../../shared/formats/ubl/ublRules';
import { UBL_PROFILES } from '../../../shared/formats/ubl/ublProfiles';
import { createTeam } from '../../helpers/factories';
import { client, type TestClient } from '../../helpers/http';
import { needsOfficialFiles, type OfficialFile, officialPath } from '../../helpers/officialFiles';
import { startTestServer } from '../../helpers/server';
import { validateXml } from '../../helpers/xmllint';

const UBL_INVOICE_XSD: OfficialFile = 'schemas:ubl-2.1/maindoc/UBL-Invoice-2.1.xsd';
const UBL_CREDIT_NOTE_XSD: OfficialFile = 'schemas:ubl-2.1/maindoc/UBL-CreditNote-2.1.xsd';
const official = needsOfficialFiles([UBL_INVOICE_XSD, UBL_CREDIT_NOTE_XSD]);

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

async function validUbl(id: string, token: string, xsd: OfficialFile) {
  const res = await http.get(`/api/invoices/${id}/ubl`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/xml/);
  const xml = res.raw.toString('utf8');
  expect(validateXml(xml, officialPath(xsd)).errors).toBe('');
  expect(checkUblRules(xml, 'peppol')).toEqual([]);
  return { xml, doc: parser.parse(xml) };
}

describe('Peppol BIS Billing 3.0 UBL', () => {
  it.skipIf(!official)('an invoice and its Storno credit note: XSD-valid, rule-clean, with both electronic addresses', async () => {
    const { admin } = await createTeam();
    const token = admin.token;
    expect(
      (await http.put('/api/settings', { contactName: 'Eva Muster', contactPhone: '+43 1 2345678', contactEmail: 'office@test.example' }, { token })).status,
    ).toBe(200);
    const c = await http.post(
      '/api/customers',
      { name: 'Einkauf', company: 'Größl & Söhne KG', vatId: 'ATU87654321', address: 'Landstraße 12\n4020 Linz', email: 'office@groessl.example' },
      { token },
    );
    const inv = await http.post(
      '/api/invoices',
      {
        type: 'rechnung',
        customerId: c.body.id,
        orderReference: 'PO-12',
        items: [{ description: 'Beratung', quantity: 3, unitPrice: '120.00', taxRate: '20' }],
      },
      { token },
    );
    expect((await http.post(`/api/invoices/${inv.body.id}/send`, {}, { token })).status).toBe(202);

    const { doc } = await validUbl(inv.body.id, token, UBL_INVOICE_XSD);
    expect(doc.Invoice.CustomizationID).toBe(UBL_PROFILES.peppol.customizationId);
    expect(doc.Invoice.AccountingSupplierParty.Party.EndpointID).toEqual({ '#text': 'ATU12345678', '@_schemeID': '9914' });
    expect(doc.Invoice.AccountingCustomerParty.Party.EndpointID).toEqual({ '#text': 'ATU87654321', '@_schemeID': '9914' });
    expect(doc.Invoice.LegalMonetaryTotal.PayableAmount['#text']).toBe('432.00');

    const cancelled = await http.post(`/api/invoices/${inv.body.id}/cancel`, {}, { token });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    const original = (await http.get(`/api/invoices/${inv.body.id}`, { token })).body;
    const credit = await validUbl(original.creditNoteId, token, UBL_CREDIT_NOTE_XSD);
    expect(credit.doc.CreditNote.BillingReference.InvoiceDocumentReference.ID).toBe(original.number);
  });

  it('a draft is refused', async () => {
    const { admin } = await createTeam();
    const c = await http.post('/api/customers', { name: 'Kunde' }, { token: admin.token });
    const draft = await http.post(
      '/api/invoices',
      { type: 'rechnung', customerId: c.body.id, items: [{ description: 'X', quantity: 1, unitPrice: '1.00', taxRate: '20' }] },
      { token: admin.token },
    );
    expect((await http.get(`/api/invoices/${draft.body.id}/ubl`, { token: admin.token })).status).toBe(400);
  });
});
