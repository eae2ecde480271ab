import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createDraftInvoice, createSentInvoice } from '../../helpers/invoiceFactory';
import { startWorkers, type RunningWorkers } from '../../../workers/worker';
import { pdfText } from '../../helpers/pdf';
import { db } from '../../../shared/db';

/**
 * A draft shows its customer and seller live, and its documents are cached per invoice version:
 * an edit of the customer or of the tenant's seller data gives the drafts a new version, so their
 * PDF is rendered again; finalized invoices keep their snapshots, version and documents
 * (shared/documents/liveVersions.ts).
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;

beforeAll(async () => {
  server = await startTestServer({ RENDER_WAIT_MS: '30000' });
  workers = await startWorkers({ queues: ['documents'], schedule: false });
});
afterAll(async () => {
  await workers.close();
  await server.close();
});

const version = async (id: string) => (await db()('invoices').where({ id }).first('version')).version as number;

describe('documents of drafts follow the live customer and seller', () => {
  it('a customer edit renders the draft again; the finalized invoice of the same customer keeps its PDF', async () => {
    const { tenant, admin, manager } = await createTeam({ name: 'Alpen Software GmbH', address: 'Mariahilfer Straße 1\n1060 Wien' });
    const customer = await createCustomer(tenant, { name: 'PDF Kunde', address: 'Alte Gasse 1\n1010 Wien' });
    const draft = await createDraftInvoice(tenant, admin, { customerId: customer.id });
    const sent = await createSentInvoice(tenant, admin, { customerId: customer.id });
    const http = client(server.url, { token: admin.token });

    const before = await http.get(`/api/invoices/${draft.id}/pdf`);
    expect(before.status).toBe(200);
    expect(pdfText(before.raw)).toContain('Alte Gasse 1');
    const sentPdf = await http.get(`/api/invoices/${sent.id}/pdf`);
    const [draftVersion, sentVersion] = [await version(draft.id), await version(sent.id)];

    const put = await http.put(`/api/customers/${customer.id}`, { name: 'PDF Kunde Neu', address: 'Neue Straße 9\n8010 Graz' }, { token: manager.token });
    expect(put.status).toBe(200);
    expect((await http.get(`/api/invoices/${draft.id}`)).body.customer).toMatchObject({ name: 'PDF Kunde Neu' });
    const after = await http.get(`/api/invoices/${draft.id}/pdf`);
    const text = pdfText(after.raw);
    expect(text).toContain('PDF Kunde Neu');
    expect(text).toContain('Neue Straße 9');
    expect(text).not.toContain('Alte Gasse 1');
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
    expect(await version(draft.id)).toBe(draftVersion + 1);

    // The finalized invoice shows its snapshot: same version, same bytes.
    expect(await version(sent.id)).toBe(sentVersion);
    const sentAgain = await http.get(`/api/invoices/${sent.id}/pdf`);
    expect(sentAgain.raw.equals(sentPdf.raw)).toBe(true);
    expect(pdfText(sentAgain.raw)).toContain('Alte Gasse 1');

    // A change the documents do not show (the colour) gives no new version.
    expect((await http.put(`/api/customers/${customer.id}`, { color: '#336699' }, { token: manager.token })).status).toBe(200);
    expect(await version(draft.id)).toBe(draftVersion + 1);
  });

  it('a change of the seller data renders the tenant’s drafts again; finalized invoices keep theirs', async () => {
    const { tenant, admin } = await createTeam({ name: 'Alpen Software GmbH', address: 'Mariahilfer Straße 1\n1060 Wien' });
    const draft = await createDraftInvoice(tenant, admin);
    const sent = await createSentInvoice(tenant, admin);
    const http = client(server.url, { token: admin.token });
    expect(pdfText((await http.get(`/api/invoices/${draft.id}/pdf`)).raw)).toContain('Mariahilfer Straße 1');
    const sentPdf = await http.get(`/api/invoices/${sent.id}/pdf`);
    const [draftVersion, sentVersion] = [await version(draft.id), await version(sent.id)];

    // Settings that no document shows (the e-mail template) change no version.
    expect((await http.put('/api/settings', { templates: { emailSubject: 'Rechnung {{invoiceNumber}}' } })).status).toBe(200);
    expect(await version(draft.id)).toBe(draftVersion);

    const put = await http.put('/api/settings', { companyName: 'Alpen Software AG', address: 'Herrengasse 5\n8010 Graz' });
    expect(put.status).toBe(200);
    const text = pdfText((await http.get(`/api/invoices/${draft.id}/pdf`)).raw);
    expect(text).toContain('Alpen Software AG');
    expect(text).toContain('Herrengasse 5');
    expect(await version(draft.id)).toBe(draftVersion + 1);

    expect(await version(sent.id)).toBe(sentVersion);
    const sentAgain = await http.get(`/api/invoices/${sent.id}/pdf`);
    expect(sentAgain.raw.equals(sentPdf.raw)).toBe(true);
    expect(pdfText(sentAgain.raw)).toContain('Alpen Software GmbH');
  });
});
