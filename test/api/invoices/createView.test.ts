import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createSentInvoice, createSupplier } from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';
import { loadTenantAndCustomer } from '../../../shared/commands/invoiceShared';

let server: Awaited<ReturnType<typeof startTestServer>>;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

// The create response is built from the rows just written (no read-back statement); it must be
// exactly what reading the invoice returns.
it('POST /api/invoices answers exactly what GET /api/invoices/:id then returns, for every type', async () => {
  const { tenant, admin } = await createTeam();
  const http = client(server.url, { token: admin.token });
  const customer = await createCustomer(tenant, { vatId: 'DE123456789', address: 'Hauptstr. 1\n10115 Berlin' });
  const supplier = await createSupplier(tenant);
  const original = await createSentInvoice(tenant, admin, { customerId: customer.id });
  const items = [
    { description: 'Beratung', unit: 'h', quantity: '2.5', unitPrice: '99.99', taxRate: '20' },
    { description: 'Buch', quantity: 3, unitPrice: '12.40', taxRate: '10' },
    { description: 'Rabatt', quantity: 1, unitPrice: '-5.00', taxRate: '20' },
  ];
  const bodies = [
    { type: 'rechnung', customerId: customer.id, items, notes: 'Danke', footerText: 'Fuß', customFields: { projekt: 'X-1' }, paymentTermDays: 30, serviceDate: '2026-11-01' },
    { type: 'angebot', customerId: customer.id, items, detailsMarkdown: '# Umfang\n\n- a' },
    { type: 'gutschrift', customerId: customer.id, items, relatedInvoiceId: original.id },
    { type: 'eingangsrechnung', supplierId: supplier.id, invoiceNumber: 'L-77', invoiceDate: '2026-11-20', items },
  ];
  for (const body of bodies) {
    const created = await http.post('/api/invoices', body);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const read = await http.get(`/api/invoices/${created.body.id}`);
    expect(created.body).toEqual(read.body);
  }
});

// Tenant and customer are read in one statement; the customer row must still be locked FOR SHARE
// until the create commits, so a concurrent delete waits and then sees the invoice.
it('the customer of a new invoice stays locked until the create commits', async () => {
  const { tenant } = await createTeam();
  const customer = await createCustomer(tenant);
  const takeForUpdate = () => db().raw('select id from customers where id = ? for update nowait', [customer.id]);
  const trx = await db().transaction();
  try {
    const { tenant: t, customer: c } = await loadTenantAndCustomer(trx, tenant.id, customer.id);
    expect(t.country).toBe(tenant.country);
    expect(c).toMatchObject({ id: customer.id, name: customer.name, deletedAt: null });
    await expect(takeForUpdate()).rejects.toMatchObject({ code: '55P03' });
  } finally {
    await trx.rollback();
  }
  await expect(takeForUpdate()).resolves.toBeTruthy();
});
