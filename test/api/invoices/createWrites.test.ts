import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer } from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';
import { decimalTotals } from '../../../shared/domain/invoiceTotals';

let server: Awaited<ReturnType<typeof startTestServer>>;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

const subscription = (tenantId: string, events: string[], extra: Record<string, unknown> = {}) =>
  db()('webhookSubscriptions').insert({ tenantId, url: 'https://receiver.example/hook', events, secretEnc: 'unused', ...extra });

const eventsOf = async (tenantId: string) =>
  (await db()('outboundEvents').where({ tenantId }).orderBy('createdAt').select('type', 'object')) as { type: string; object: { id: string } }[];

// createInvoice without a transaction reads the tenant, the customer and whether a subscription
// wants invoice.created in one statement, and starts over in a transaction (to write the event
// with the invoice) only if one does.
it('a create without Idempotency-Key writes invoice.created exactly when an active subscription of the tenant names it', async () => {
  const { tenant, admin } = await createTeam();
  const other = await createTeam();
  const http = client(server.url, { token: admin.token });
  const customer = await createCustomer(tenant, {});
  const body = { type: 'rechnung', customerId: customer.id, items: [{ description: 'A', quantity: 1, unitPrice: '10.00', taxRate: '20' }] };

  await subscription(tenant.id, ['invoice.paid', 'invoice.sent']);
  await subscription(tenant.id, ['invoice.created'], { active: false });
  await subscription(tenant.id, ['invoice.created'], { deletedAt: db().fn.now() });
  await subscription(other.tenant.id, ['invoice.created']);
  const unwanted = await http.post('/api/invoices', body);
  expect(unwanted.status, JSON.stringify(unwanted.body)).toBe(201);
  expect(await eventsOf(tenant.id)).toEqual([]);

  await subscription(tenant.id, ['invoice.paid', 'invoice.created']);
  const wanted = await http.post('/api/invoices', body);
  expect(wanted.status).toBe(201);
  const events = await eventsOf(tenant.id);
  expect(events.map((e) => [e.type, e.object.id])).toEqual([['invoice.created', wanted.body.id]]);
  expect(events[0].object).toEqual(wanted.body);
  // A quote is invoice.created too; an incoming invoice is incoming_invoice.created, which nobody wants here.
  const quote = await http.post('/api/invoices', { ...body, type: 'angebot' });
  expect((await eventsOf(tenant.id)).map((e) => e.object.id)).toEqual([wanted.body.id, quote.body.id]);
  expect(await eventsOf(other.tenant.id)).toEqual([]);

  // A customer that does not exist is the same 400 whether or not a subscription wants the event.
  const missing = await http.post('/api/invoices', { ...body, customerId: '00000000-0000-4000-8000-000000000000' });
  expect(missing.status).toBe(400);
  expect(missing.body.error.details).toEqual([{ field: 'customerId', message: 'customer does not exist' }]);
});

// The totals are computed in integers where that is exact (computeTotals' integerTotals): the rows
// written must be what decimal.js computes, for lines of every kind.
it('writes the totals, breakdown and item amounts decimal.js computes, for a variety of lines', async () => {
  const { tenant, admin } = await createTeam();
  const http = client(server.url, { token: admin.token });
  const customer = await createCustomer(tenant, { vatId: 'ATU87654321', address: 'Ring 1\n1010 Wien' });
  const bodies = [
    [
      { description: 'Tie', quantity: 1, unitPrice: '0.05', taxRate: '10' },
      { description: 'Tie 2', quantity: 3, unitPrice: '0.05', taxRate: '10' },
    ],
    [
      { description: 'Stunden', quantity: '2.5', unitPrice: '99.99', taxRate: '20' },
      { description: 'Buch', quantity: 3, unitPrice: '12.40', taxRate: '10' },
      { description: 'Rabatt', quantity: 1, unitPrice: '-5.00', taxRate: '20' },
      { description: 'Miete', quantity: '0.3333', unitPrice: '1000.01', taxRate: '13' },
    ],
    [{ description: 'Groß', quantity: '999.9999', unitPrice: '99999999.99', taxRate: '20' }],
    [{ description: 'Null', quantity: 1, unitPrice: '0.00', taxRate: '0' }],
    Array.from({ length: 25 }, (_, i) => ({
      description: `P${i}`,
      quantity: (i % 7) + 0.5,
      unitPrice: `${i * 3}.${(i * 7) % 100}`,
      taxRate: ['20', '10', '13', '0'][i % 4],
    })),
  ];
  for (const items of bodies) {
    const res = await http.post('/api/invoices', { type: 'rechnung', customerId: customer.id, items });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const expected = decimalTotals(items.map((it) => ({ quantity: it.quantity, unitPrice: it.unitPrice, taxRate: it.taxRate })));
    const row = await db()('invoices').where({ id: res.body.id }).first('totalNet', 'totalTax', 'totalGross', 'taxBreakdown');
    expect(row).toEqual({ totalNet: expected.totalNet, totalTax: expected.totalTax, totalGross: expected.totalGross, taxBreakdown: expected.taxBreakdown });
    const rows = await db()('invoiceItems')
      .where({ invoiceId: res.body.id })
      .orderBy('position')
      .select(db().raw('quantity::text as quantity, unit_price::text as "unitPrice", tax_rate::text as "taxRate"'), 'netAmount', 'taxAmount', 'grossAmount');
    expect(
      rows.map((r: Record<string, string>) => ({
        quantity: Number(r.quantity),
        unitPrice: r.unitPrice,
        taxRate: Number(r.taxRate),
        netAmount: r.netAmount,
        taxAmount: r.taxAmount,
        grossAmount: r.grossAmount,
      })),
    ).toEqual(
      expected.lines.map((l) => ({
        quantity: Number(l.quantity),
        unitPrice: l.unitPrice,
        taxRate: Number(l.taxRate),
        netAmount: l.netAmount,
        taxAmount: l.taxAmount,
        grossAmount: l.grossAmount,
      })),
    );
    expect(res.body.totalGross).toBe(expected.totalGross);
  }
});
