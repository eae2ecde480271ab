import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createSentInvoice, createSupplier } from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';
import { prepareItems } from '../../../shared/domain/invoiceChecks';
import { insertInvoiceWithItems, type NewInvoiceColumns } from '../../../shared/commands/invoices/insertInvoice';
import { totalsColumns } from '../../../shared/commands/invoices/columns';

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
    {
      type: 'rechnung',
      customerId: customer.id,
      items,
      notes: 'Danke',
      footerText: 'Fuß',
      customFields: { projekt: 'X-1' },
      paymentTermDays: 30,
      serviceDate: '2026-11-01',
    },
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

// The single read builds the invoice from one JSON column, the list from the rows: the same view,
// with a payment, a sent date, a Storno credit note and the customer snapshot of a finalized invoice.
it('GET /api/invoices/:id and the list give the same view of an invoice', async () => {
  const { tenant, admin } = await createTeam();
  const http = client(server.url, { token: admin.token });
  const customer = await createCustomer(tenant, { vatId: 'ATU12345678', address: 'Ring 1\n1010 Wien' });
  const sent = await createSentInvoice(tenant, admin, { customerId: customer.id, paymentTermDays: 14, customFields: { kostenstelle: '4711' } });
  expect((await http.post(`/api/invoices/${sent.id}/payments`, { amount: '10.05', date: '2026-11-20', method: 'bank_transfer' })).status).toBe(201);
  // A manual credit note pointing at the invoice first: the view shows the Storno, not this one.
  const manual = await http.post('/api/invoices', {
    type: 'gutschrift',
    customerId: customer.id,
    relatedInvoiceId: sent.id,
    items: [{ description: 'Gutschrift', quantity: 1, unitPrice: '1.00', taxRate: '20' }],
  });
  expect(manual.status).toBe(201);
  const cancel = await http.post(`/api/invoices/${sent.id}/cancel`, {});
  expect(cancel.status).toBe(200);

  const single = await http.get(`/api/invoices/${sent.id}`);
  const list = await http.get(`/api/invoices?customerId=${customer.id}&type=rechnung`);
  const entry = list.body.data.find((x: { id: string }) => x.id === sent.id);
  const { deliveries, ...view } = single.body;
  expect(Array.isArray(deliveries)).toBe(true);
  // A list entry adds deletedAt (docs/sync.md): null outside an updatedSince list.
  const { deletedAt, ...listView } = entry;
  expect(deletedAt).toBeNull();
  expect(view).toEqual(listView);
  expect(view).toMatchObject({
    sentAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    creditNoteId: cancel.body.creditNote.id,
    status: 'storniert',
    amountPaid: '10.05',
    paymentTermDays: 14,
  });
});

// Without an Idempotency-Key a create is two statements and no transaction: the reads, then one
// insert that re-checks the customer and holds it FOR SHARE until it commits. So a customer deleted
// after the reads gets no invoice, and a delete during the insert waits and then sees the invoice.
describe('the insert statement guards the customer', () => {
  const prepared = () => prepareItems([{ description: 'Leistung', quantity: 1, unitPrice: '10.00', taxRate: '20' }], 'AT');
  const columns = (tenantId: string, customerId: string): NewInvoiceColumns => ({
    tenantId,
    type: 'rechnung',
    status: 'entwurf',
    customerId,
    issueDate: '2026-11-24',
    currency: 'EUR',
    ...totalsColumns(prepared().totals),
  });

  it('a customer deleted since the reads: 400, and nothing of the invoice is written', async () => {
    const { tenant, admin } = await createTeam();
    const customer = await createCustomer(tenant);
    await db()('customers').where({ id: customer.id }).update({ deletedAt: db().fn.now() });
    const actor = { userId: admin.id, tenantId: tenant.id, role: 'admin' as const };
    await expect(
      insertInvoiceWithItems(db(), columns(tenant.id, customer.id), prepared(), { actor, action: 'invoice.created', data: {} }, { customerId: customer.id }),
    ).rejects.toMatchObject({ status: 400, code: 'INVALID_INPUT', details: [{ field: 'customerId', message: expect.stringMatching(/deleted/) }] });
    const count = async (table: string, where = {}) =>
      Number(
        (
          await db()(table)
            .where({ tenantId: tenant.id, ...where })
            .count({ n: '*' })
        )[0].n,
      );
    expect([await count('invoices'), await count('invoiceItems'), await count('auditLog', { entityType: 'invoice' })]).toEqual([0, 0, 0]);
  });

  it("another tenant's customer id is refused the same way", async () => {
    const { tenant, admin } = await createTeam();
    const other = await createTeam();
    const foreign = await createCustomer(other.tenant);
    const actor = { userId: admin.id, tenantId: tenant.id, role: 'admin' as const };
    await expect(
      insertInvoiceWithItems(db(), columns(tenant.id, foreign.id), prepared(), { actor, action: 'invoice.created', data: {} }, { customerId: foreign.id }),
    ).rejects.toMatchObject({ status: 400, code: 'INVALID_INPUT' });
  });

  it('the customer stays locked until the insert commits', async () => {
    const { tenant, admin } = await createTeam();
    const customer = await createCustomer(tenant);
    const actor = { userId: admin.id, tenantId: tenant.id, role: 'admin' as const };
    const takeForUpdate = () => db().raw('select id from customers where id = ? for update nowait', [customer.id]);
    const trx = await db().transaction();
    try {
      const { row } = (await insertInvoiceWithItems(
        trx,
        columns(tenant.id, customer.id),
        prepared(),
        { actor, action: 'invoice.created', data: {} },
        { customerId: customer.id },
      ))!;
      expect(row).toMatchObject({ tenantId: tenant.id, customerId: customer.id });
      await expect(takeForUpdate()).rejects.toMatchObject({ code: '55P03' });
    } finally {
      await trx.rollback();
    }
    await expect(takeForUpdate()).resolves.toBeTruthy();
  });
});
