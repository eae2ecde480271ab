import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import {
  cancelInvoice,
  createCustomer,
  createDraftInvoice,
  createIncomingInvoice,
  createSentInvoice,
  createSupplier,
  recordPayment,
} from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';

/**
 * A list page is built by one statement returning each invoice with its items, customer,
 * payments and related number as JSON (shared/queries/invoices.ts, docs/lists.md). Whatever the
 * invoice, its list entry must be exactly its single read without the e-mail deliveries, plus
 * deletedAt.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

it('every list entry equals GET /api/invoices/:id without deliveries: drafts, sent, paid, cancelled with credit note, incoming, foreign customer, no customer', async () => {
  const { tenant, admin } = await createTeam();
  const http = client(server.url, { token: admin.token });
  const customer = await createCustomer(tenant, { vatId: 'DE123456789', address: 'Hauptstr. 1\n10115 Berlin', country: 'DE' });
  const local = await createCustomer(tenant, { name: 'Müller & Söhne "Wien"', address: 'Landstraße 12\n4020 Linz' });
  const supplier = await createSupplier(tenant);
  const items = [
    { description: 'Beratung ✓ 東京', unit: 'h', quantity: '2.5', unitPrice: '99.99', taxRate: '20' },
    { description: 'Buch', quantity: 3, unitPrice: '12.40', taxRate: '10' },
  ];
  await createDraftInvoice(tenant, admin, { customerId: local.id, items, notes: 'Danke', customFields: { projekt: 'X-1' } });
  await createDraftInvoice(tenant, admin, { items: [{ description: 'ohne Kunde', quantity: 1, unitPrice: '0', taxRate: '0' }] });
  const sent = await createSentInvoice(tenant, admin, { customerId: customer.id, items });
  await recordPayment(tenant, admin, sent.id, { amount: '10.00' });
  const cancelled = await createSentInvoice(tenant, admin, { customerId: local.id, items });
  await cancelInvoice(tenant, admin, cancelled.id);
  await createIncomingInvoice(tenant, admin, { supplierId: supplier.id, invoiceNumber: 'ER-77', items });

  const res = await http.get('/api/invoices?limit=100');
  expect(res.status).toBe(200);
  // Both drafts, the sent and the cancelled invoice, the cancellation's credit note, the incoming one.
  expect(res.body.data.map((e: { type: string; status: string }) => `${e.type}/${e.status}`).sort()).toEqual(
    ['eingangsrechnung/offen', 'gutschrift/bezahlt', 'rechnung/entwurf', 'rechnung/entwurf', 'rechnung/teilbezahlt', 'rechnung/storniert'].sort(),
  );
  for (const entry of res.body.data) {
    const single = await http.get(`/api/invoices/${entry.id}`);
    const { deliveries: _deliveries, ...expected } = single.body;
    expect(entry).toEqual({ ...expected, deletedAt: null });
  }
  // A page past the end has no row to carry the total: it is asked for on its own.
  const past = await http.get('/api/invoices?limit=5&page=9');
  expect(past.body.data).toEqual([]);
  expect(past.body.pagination).toMatchObject({ page: 9, total: 6, totalPages: 2, nextCursor: null });
  expect((await http.get('/api/invoices?limit=5&page=2')).body.pagination).toMatchObject({ total: 6, totalPages: 2 });
  // Deleted drafts show in the incremental sync with their deletedAt as ISO text.
  const draft = res.body.data.find((e: { status: string }) => e.status === 'entwurf');
  const since = new Date(Date.now() - 60_000).toISOString();
  expect((await http.delete(`/api/invoices/${draft.id}`)).status).toBe(204);
  const sync = await http.get(`/api/invoices?updatedSince=${encodeURIComponent(since)}&limit=100`);
  const gone = sync.body.data.find((e: { id: string }) => e.id === draft.id);
  const [{ deletedAt }] = await db()('invoices').where({ id: draft.id }).select('deletedAt');
  expect(gone.deletedAt).toBe(new Date(deletedAt).toISOString());
});
