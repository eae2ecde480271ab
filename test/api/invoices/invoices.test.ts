import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createDraftInvoice, createSentInvoice, createSupplier, recordPayment, cancelInvoice } from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';
import { todayVienna } from '../../../shared/domain/dates';

let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;
beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});
afterAll(async () => server.close());

const item = (o: Record<string, unknown> = {}) => ({ description: 'Leistung', quantity: 1, unitPrice: '100.00', taxRate: '20', ...o });

async function setup(tenantOverrides: Record<string, unknown> = {}) {
  const team = await createTeam(tenantOverrides);
  const customer = await createCustomer(team.tenant, { paymentTermDays: 30 });
  return { ...team, customer };
}

describe('POST /api/invoices', () => {
  it('creates a draft with computed totals, items renumbered in submitted order → 201 InvoiceView', async () => {
    const { member, customer } = await setup();
    const res = await http.post(
      '/api/invoices',
      {
        type: 'rechnung',
        customerId: customer.id,
        items: [
          item({ description: 'B', quantity: '2.5', unit: 'h', unitPrice: '80.00', position: 7 }),
          item({ description: 'A', quantity: 3, unitPrice: '0.33', taxRate: '10', position: 1 }),
          item({ description: 'C', quantity: '1.0000', unitPrice: '-10.00', taxRate: '20.00' }),
        ],
        notes: 'Danke',
        footerText: 'Bankverbindung …',
        customFields: { projekt: 'P-1' },
        serviceDate: '2026-01-15',
        expectedTotalGross: '229.09',
      },
      { token: member.token },
    );
    expect(res.status).toBe(201);
    const inv = res.body;
    expect(inv).toMatchObject({
      type: 'rechnung',
      status: 'entwurf',
      number: null,
      customerId: customer.id,
      customer: { id: customer.id, name: customer.name },
      currency: 'EUR',
      issueDate: todayVienna(),
      serviceDate: '2026-01-15',
      notes: 'Danke',
      footerText: 'Bankverbindung …',
      customFields: { projekt: 'P-1' },
      totalNet: '190.99',
      totalTax: '38.10',
      totalGross: '229.09',
      amountPaid: '0.00',
      amountDue: '229.09',
      payments: [],
      relatedInvoiceId: null,
      sentAt: null,
    });
    expect(inv.items.map((i: any) => [i.position, i.description, i.quantity, i.unitPrice, i.taxRate, i.netAmount])).toEqual([
      [1, 'B', 2.5, '80.00', '20', '200.00'],
      [2, 'A', 3, '0.33', '10', '0.99'],
      [3, 'C', 1, '-10.00', '20', '-10.00'],
    ]);
    // quantity is a JSON number (the spec's Item table); money and rates stay strings
    expect(res.raw.toString()).toContain('"quantity":2.5,');
    expect(inv.taxBreakdown).toEqual([
      { taxRate: '10', net: '0.99', tax: '0.10' },
      { taxRate: '20', net: '190.00', tax: '38.00' },
    ]);
    const get = await http.get(`/api/invoices/${inv.id}`, { token: member.token });
    expect(get.body).toEqual(inv);
  });

  it('quantities come back as exact JSON numbers, up to 10 integer and 4 decimal digits', async () => {
    const { member, customer } = await setup();
    const quantities = ['0.0001', '0.1', '0.2', '0.3', '1.2345', '33.3333', '1000', '1234567.8912', '9999999999.9999'];
    const res = await http.post(
      '/api/invoices',
      { type: 'rechnung', customerId: customer.id, items: quantities.map((q) => item({ quantity: q, unitPrice: '0.01' })) },
      { token: member.token },
    );
    expect(res.status).toBe(201);
    const fromJson = (raw: Buffer) => [...raw.toString().matchAll(/"quantity":([^,}]+)/g)].map((m) => m[1]);
    expect(fromJson(res.raw)).toEqual(quantities);
    const read = await http.get(`/api/invoices/${res.body.id}`, { token: member.token });
    expect(fromJson(read.raw)).toEqual(quantities);
    expect(read.body.items.map((i: any) => i.quantity)).toEqual(quantities.map(Number));
  });

  it('expectedTotalGross mismatch → 422 with expected and computed', async () => {
    const { member, customer } = await setup();
    const res = await http.post(
      '/api/invoices',
      { type: 'rechnung', customerId: customer.id, items: [item()], expectedTotalGross: '119.99' },
      { token: member.token },
    );
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'UNPROCESSABLE', status: 422, expected: '119.99', computed: '120.00' });
  });

  it('tax rates per tenant country: AT 0/10/13/20, DE 0/7/19; the message lists the allowed values', async () => {
    const at = await setup();
    let res = await http.post(
      '/api/invoices',
      { type: 'rechnung', customerId: at.customer.id, items: [item(), item({ taxRate: '19' })] },
      { token: at.member.token },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_INPUT');
    expect(res.body.error.details).toEqual([{ field: 'items.1.taxRate', message: expect.stringContaining('0, 10, 13, 20') }]);
    for (const r of ['0', '10', '13', '20']) {
      expect(
        (await http.post('/api/invoices', { type: 'rechnung', customerId: at.customer.id, items: [item({ taxRate: r })] }, { token: at.member.token })).status,
      ).toBe(201);
    }
    const de = await setup({ country: 'DE', vatId: 'DE123456789' });
    res = await http.post('/api/invoices', { type: 'rechnung', customerId: de.customer.id, items: [item({ taxRate: '20' })] }, { token: de.member.token });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0]).toEqual({ field: 'items.0.taxRate', message: expect.stringContaining('0, 7, 19') });
    res = await http.post(
      '/api/invoices',
      { type: 'rechnung', customerId: de.customer.id, items: [item({ taxRate: '19' }), item({ taxRate: '7' })] },
      { token: de.member.token },
    );
    expect(res.status).toBe(201);
    expect(res.body.totalGross).toBe('226.00');
  });

  it.each([
    ['missing type', { customerId: 'C', items: [item()] }, 'type'],
    ['unknown type', { type: 'rechnungen', customerId: 'C', items: [item()] }, 'type'],
    ['missing customerId', { type: 'rechnung', items: [item()] }, 'customerId'],
    ['no items', { type: 'rechnung', customerId: 'C', items: [] }, 'items'],
    ['missing items', { type: 'rechnung', customerId: 'C' }, 'items'],
    ['item without description', { type: 'rechnung', customerId: 'C', items: [{ quantity: 1, unitPrice: '1.00', taxRate: '20' }] }, 'items.0.description'],
    ['item without quantity', { type: 'rechnung', customerId: 'C', items: [{ description: 'x', unitPrice: '1.00', taxRate: '20' }] }, 'items.0.quantity'],
    ['zero quantity', { type: 'rechnung', customerId: 'C', items: [item({ quantity: 0 })] }, 'items.0.quantity'],
    ['negative quantity', { type: 'rechnung', customerId: 'C', items: [item({ quantity: '-1' })] }, 'items.0.quantity'],
    ['5 decimal quantity', { type: 'rechnung', customerId: 'C', items: [item({ quantity: 1.00001 })] }, 'items.0.quantity'],
    ['unitPrice as number', { type: 'rechnung', customerId: 'C', items: [item({ unitPrice: 10 })] }, 'items.0.unitPrice'],
    ['unitPrice with 3 places', { type: 'rechnung', customerId: 'C', items: [item({ unitPrice: '1.005' })] }, 'items.0.unitPrice'],
    ['taxRate as number', { type: 'rechnung', customerId: 'C', items: [item({ taxRate: 20 })] }, 'items.0.taxRate'],
    ['unknown item property', { type: 'rechnung', customerId: 'C', items: [item({ vat: 1 })] }, 'items.0.vat'],
    ['unknown property', { type: 'rechnung', customerId: 'C', items: [item()], foo: 1 }, 'foo'],
    ['detailsMarkdown on rechnung', { type: 'rechnung', customerId: 'C', items: [item()], detailsMarkdown: '# x' }, 'detailsMarkdown'],
    ['bad issueDate', { type: 'rechnung', customerId: 'C', items: [item()], issueDate: '2026-02-30' }, 'issueDate'],
    ['negative paymentTermDays', { type: 'rechnung', customerId: 'C', items: [item()], paymentTermDays: -1 }, 'paymentTermDays'],
    ['customFields non-string', { type: 'rechnung', customerId: 'C', items: [item()], customFields: { a: 1 } }, 'customFields.a'],
    ['unknown currency', { type: 'rechnung', customerId: 'C', items: [item()], currency: 'ABC' }, 'currency'],
    ['malformed expectedTotalGross', { type: 'rechnung', customerId: 'C', items: [item()], expectedTotalGross: '12,00' }, 'expectedTotalGross'],
    ['unknown customer', { type: 'rechnung', customerId: '00000000-0000-4000-8000-000000000000', items: [item()] }, 'customerId'],
  ])('%s → 400', async (_name, body, field) => {
    const { member, customer } = await setup();
    const b = JSON.parse(JSON.stringify(body).replace('"C"', JSON.stringify(customer.id)));
    const res = await http.post('/api/invoices', b, { token: member.token });
    expect(res.status).toBe(400);
    expect(['INVALID_INPUT', 'MISSING_FIELD']).toContain(res.body.error.code);
    expect(res.body.error.details.map((d: any) => d.field)).toContain(field);
  });

  it('a total below zero is refused (422): corrections are credit notes', async () => {
    const { member, customer } = await setup();
    const res = await http.post('/api/invoices', { type: 'rechnung', customerId: customer.id, items: [item({ unitPrice: '-5.00' })] }, { token: member.token });
    expect(res.status).toBe(422);
  });

  it('angebot accepts detailsMarkdown; currency defaults from the customer', async () => {
    const { tenant, member } = await setup();
    const c = await createCustomer(tenant, { currency: 'CHF' });
    const res = await http.post(
      '/api/invoices',
      { type: 'angebot', customerId: c.id, items: [item()], detailsMarkdown: '## Umfang\n- A' },
      { token: member.token },
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ type: 'angebot', detailsMarkdown: '## Umfang\n- A', currency: 'CHF' });
  });

  it('eingangsrechnung: needs supplierId, invoiceNumber, invoiceDate and items; starts offen with the supplier’s number', async () => {
    const { tenant, member } = await setup();
    const s = await createSupplier(tenant);
    let res = await http.post('/api/invoices', { type: 'eingangsrechnung', items: [item()] }, { token: member.token });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: any) => d.field).sort()).toEqual(['invoiceDate', 'invoiceNumber', 'supplierId']);
    res = await http.post(
      '/api/invoices',
      {
        type: 'eingangsrechnung',
        supplierId: s.id,
        invoiceNumber: 'L-4711',
        invoiceDate: '2026-03-02',
        items: [item({ unitPrice: '50.00' })],
        paymentTermDays: 10,
      },
      { token: member.token },
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      type: 'eingangsrechnung',
      status: 'offen',
      number: 'L-4711',
      invoiceNumber: 'L-4711',
      invoiceDate: '2026-03-02',
      issueDate: '2026-03-02',
      dueDate: '2026-03-12',
      supplierId: s.id,
      customer: null,
      totalGross: '60.00',
    });
    const pay = await http.post(
      `/api/invoices/${res.body.id}/payments`,
      { amount: '60.00', date: '2026-03-05', method: 'bank_transfer' },
      { token: member.token },
    );
    expect(pay.status).toBe(201);
    expect(pay.body.invoice.status).toBe('bezahlt');
  });
});

describe('GET /api/invoices (list)', () => {
  it('filters by type, status, customerId, from/to (inclusive) with {data, pagination}', async () => {
    const { tenant, member, viewer } = await setup();
    const c1 = await createCustomer(tenant);
    const c2 = await createCustomer(tenant);
    const d1 = await createDraftInvoice(tenant, member, { customerId: c1.id, issueDate: '2026-01-01' });
    const d2 = await createDraftInvoice(tenant, member, { customerId: c1.id, issueDate: '2026-01-31' });
    const d3 = await createDraftInvoice(tenant, member, { customerId: c2.id, issueDate: '2026-02-01', type: 'angebot' });
    const sent = await createSentInvoice(tenant, member, { customerId: c2.id });
    const ids = async (q: string) => {
      const r = await http.get(`/api/invoices${q}`, { token: viewer.token });
      expect(r.status, q).toBe(200);
      return r.body.data.map((i: any) => i.id).sort();
    };
    expect(await ids('?type=angebot')).toEqual([d3.id]);
    expect(await ids('?status=offen')).toEqual([sent.id]);
    expect(await ids('?status=entwurf&type=rechnung')).toEqual([d1.id, d2.id].sort());
    expect(await ids(`?customerId=${c1.id}`)).toEqual([d1.id, d2.id].sort());
    expect(await ids('?from=2026-01-01&to=2026-01-31')).toEqual([d1.id, d2.id].sort());
    expect(await ids('?from=2026-01-31&to=2026-02-01')).toEqual([d2.id, d3.id].sort());
    expect(await ids('?to=2025-12-31')).toEqual([]);
    const all = await http.get('/api/invoices', { token: viewer.token });
    expect(all.body.pagination).toEqual({ page: 1, limit: 25, total: 4, totalPages: 1, nextCursor: null });
    // newest issue date first; entries carry totals, items and payments
    expect(all.body.data[0].id).toBe(sent.id);
    expect(all.body.data[0]).toMatchObject({ totalGross: '1494.60', amountDue: '1494.60', customer: { id: c2.id }, payments: [] });
    for (const entry of all.body.data) expect(entry.payments).toEqual([]);
  });

  it('list entries carry their payments (decisions.md: payments[] is an invoice field), each entry its own', async () => {
    const { tenant, member, viewer } = await setup();
    const a = await createSentInvoice(tenant, member);
    const b = await createSentInvoice(tenant, member);
    const c = await createDraftInvoice(tenant, member);
    await recordPayment(tenant, member, a.id, { amount: '100.00', date: '2026-01-02' });
    await recordPayment(tenant, member, a.id, { amount: '0.60', date: '2026-01-01', method: 'cash' });
    await recordPayment(tenant, member, b.id, { amount: b.totalGross });
    const list = await http.get('/api/invoices?limit=100', { token: viewer.token });
    expect(list.status).toBe(200);
    const byId = new Map(list.body.data.map((i: any) => [i.id, i]));
    for (const inv of [a, b, c]) {
      const one = (await http.get(`/api/invoices/${inv.id}`, { token: viewer.token })).body;
      expect((byId.get(inv.id) as any).payments).toEqual(one.payments);
    }
    expect((byId.get(a.id) as any).payments.map((p: any) => [p.amount, p.date, p.method])).toEqual([
      ['0.60', '2026-01-01', 'cash'],
      ['100.00', '2026-01-02', 'bank_transfer'],
    ]);
    expect(byId.get(a.id) as any).toMatchObject({ status: 'teilbezahlt', amountPaid: '100.60', amountDue: '1394.00' });
    expect((byId.get(b.id) as any).payments).toHaveLength(1);
    expect((byId.get(c.id) as any).payments).toEqual([]);
    // deliveries stay a single-read field
    expect((byId.get(a.id) as any).deliveries).toBeUndefined();
  });

  it('pagination edges: page beyond the end → empty data with total; limit 0/101, page 0, bad filters → 400', async () => {
    const { tenant, member, viewer } = await setup();
    for (let i = 0; i < 3; i++) await createDraftInvoice(tenant, member);
    const p = await http.get('/api/invoices?limit=2&page=2', { token: viewer.token });
    expect(p.body.data).toHaveLength(1);
    expect(p.body.pagination).toEqual({ page: 2, limit: 2, total: 3, totalPages: 2, nextCursor: null });
    const beyond = await http.get('/api/invoices?limit=2&page=5', { token: viewer.token });
    expect(beyond.status).toBe(200);
    expect(beyond.body).toEqual({ data: [], pagination: { page: 5, limit: 2, total: 3, totalPages: 2, nextCursor: null } });
    expect((await http.get('/api/invoices?limit=100', { token: viewer.token })).status).toBe(200);
    for (const q of [
      'limit=0',
      'limit=101',
      'page=0',
      'page=-1',
      'limit=abc',
      'status=paid',
      'type=invoice',
      'customerId=123',
      'from=2026-13-01',
      'from=2026-02-01&to=2026-01-01',
    ]) {
      const r = await http.get(`/api/invoices?${q}`, { token: viewer.token });
      expect(r.status, q).toBe(400);
      expect(r.body.error.code).toBe('INVALID_INPUT');
    }
  });

  it('deleted invoices disappear from list and GET', async () => {
    const { tenant, member, manager, viewer } = await setup();
    const d = await createDraftInvoice(tenant, member);
    expect((await http.delete(`/api/invoices/${d.id}`, { token: manager.token })).status).toBe(204);
    expect((await http.get(`/api/invoices/${d.id}`, { token: viewer.token })).status).toBe(404);
    expect((await http.get('/api/invoices', { token: viewer.token })).body.pagination.total).toBe(0);
    const row = await db()('invoices').where({ id: d.id }).first();
    expect(row.deletedAt).not.toBeNull();
  });
});

describe('PUT /api/invoices/:id', () => {
  it('draft: full replace → 200, positions renumbered, totals recomputed', async () => {
    const { tenant, member, manager, customer } = await setup();
    const d = await createDraftInvoice(tenant, member, { notes: 'alt', footerText: 'f' });
    const res = await http.put(
      `/api/invoices/${d.id}`,
      { customerId: customer.id, items: [item({ description: 'Z', quantity: 2 }), item({ description: 'Y', taxRate: '10' })], issueDate: '2026-05-01' },
      { token: manager.token },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      customerId: customer.id,
      notes: null,
      footerText: null,
      issueDate: '2026-05-01',
      totalNet: '300.00',
      totalTax: '50.00',
      totalGross: '350.00',
    });
    expect(res.body.items.map((i: any) => [i.position, i.description])).toEqual([
      [1, 'Z'],
      [2, 'Y'],
    ]);
    expect(
      (await http.put(`/api/invoices/${d.id}`, { customerId: customer.id, items: [item()], expectedTotalGross: '1.00' }, { token: manager.token })).status,
    ).toBe(422);
    const noItems = await http.put(`/api/invoices/${d.id}`, { customerId: customer.id }, { token: manager.token });
    expect(noItems.status).toBe(400);
    const typeChange = await http.put(`/api/invoices/${d.id}`, { type: 'angebot', customerId: customer.id, items: [item()] }, { token: manager.token });
    expect(typeChange.status).toBe(400);
  });

  it('finalized (offen, teilbezahlt, bezahlt): only notes, footerText, customFields; other changes → 400 IMMUTABLE naming them', async () => {
    const { tenant, member, manager } = await setup();
    const inv = await createSentInvoice(tenant, member);
    let res = await http.put(
      `/api/invoices/${inv.id}`,
      { notes: 'Bitte bis Monatsende', footerText: 'Neu', customFields: { po: '42' } },
      { token: manager.token },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ notes: 'Bitte bis Monatsende', footerText: 'Neu', customFields: { po: '42' }, status: 'offen', number: inv.number });
    res = await http.put(`/api/invoices/${inv.id}`, { notes: 'x', items: [item()], paymentTermDays: 99 }, { token: manager.token });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('IMMUTABLE');
    expect(res.body.error.message).toContain('items');
    expect(res.body.error.message).toContain('paymentTermDays');
    // sending the unchanged content back is fine
    const same = inv.items.map((i: any) => ({ description: i.description, quantity: i.quantity, unit: i.unit, unitPrice: i.unitPrice, taxRate: i.taxRate }));
    res = await http.put(`/api/invoices/${inv.id}`, { customerId: inv.customerId, items: same, notes: 'y' }, { token: manager.token });
    expect(res.status).toBe(200);
    await recordPayment(tenant, member, inv.id, { amount: '1.00' });
    expect((await http.put(`/api/invoices/${inv.id}`, { notes: 'teil' }, { token: manager.token })).status).toBe(200);
    expect((await http.put(`/api/invoices/${inv.id}`, { issueDate: '2020-01-01' }, { token: manager.token })).body.error.code).toBe('IMMUTABLE');
    await recordPayment(tenant, member, inv.id, { amount: '1493.60' });
    expect((await http.put(`/api/invoices/${inv.id}`, { notes: 'bezahlt' }, { token: manager.token })).status).toBe(200);
    expect((await http.put(`/api/invoices/${inv.id}`, { customerId: (await createCustomer(tenant)).id }, { token: manager.token })).body.error.code).toBe(
      'IMMUTABLE',
    );
  });

  it('storniert: any update → 400 IMMUTABLE', async () => {
    const { tenant, member, manager } = await setup();
    const inv = await createSentInvoice(tenant, member);
    await cancelInvoice(tenant, manager, inv.id);
    const res = await http.put(`/api/invoices/${inv.id}`, { notes: 'x' }, { token: manager.token });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('IMMUTABLE');
  });
});

describe('DELETE /api/invoices/:id', () => {
  it('entwurf and storniert → 204; offen, teilbezahlt, bezahlt → 400 IMMUTABLE', async () => {
    const { tenant, member, manager } = await setup();
    const draft = await createDraftInvoice(tenant, member);
    expect((await http.delete(`/api/invoices/${draft.id}`, { token: manager.token })).status).toBe(204);
    const open = await createSentInvoice(tenant, member);
    const res = await http.delete(`/api/invoices/${open.id}`, { token: manager.token });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('IMMUTABLE');
    await recordPayment(tenant, member, open.id, { amount: '10.00' });
    expect((await http.delete(`/api/invoices/${open.id}`, { token: manager.token })).body.error.code).toBe('IMMUTABLE');
    const paid = await createSentInvoice(tenant, member);
    await recordPayment(tenant, member, paid.id, { amount: paid.totalGross });
    expect((await http.delete(`/api/invoices/${paid.id}`, { token: manager.token })).body.error.code).toBe('IMMUTABLE');
    await cancelInvoice(tenant, manager, open.id);
    expect((await http.delete(`/api/invoices/${open.id}`, { token: manager.token })).status).toBe(204);
  });
});

describe('roles and tenant isolation', () => {
  it('role matrix', async () => {
    const { tenant, viewer, member, manager, customer } = await setup();
    const body = { type: 'rechnung', customerId: customer.id, items: [item()] };
    expect((await http.post('/api/invoices', body, { token: viewer.token })).status).toBe(403);
    expect((await http.post('/api/invoices', body, { token: member.token })).status).toBe(201);
    const d = await createDraftInvoice(tenant, member);
    expect((await http.get('/api/invoices', { token: viewer.token })).status).toBe(200);
    expect((await http.get(`/api/invoices/${d.id}`, { token: viewer.token })).status).toBe(200);
    expect((await http.put(`/api/invoices/${d.id}`, { notes: 'x' }, { token: member.token })).status).toBe(403);
    expect((await http.delete(`/api/invoices/${d.id}`, { token: member.token })).status).toBe(403);
    expect((await http.post(`/api/invoices/${d.id}/send`, {}, { token: viewer.token })).status).toBe(403);
    const sent = await createSentInvoice(tenant, member);
    expect(
      (await http.post(`/api/invoices/${sent.id}/payments`, { amount: '1.00', date: todayVienna(), method: 'cash' }, { token: viewer.token })).status,
    ).toBe(403);
    expect((await http.post(`/api/invoices/${sent.id}/cancel`, {}, { token: member.token })).status).toBe(403);
    expect((await http.post(`/api/invoices/${sent.id}/cancel`, {}, { token: manager.token })).status).toBe(200);
    const q = await createDraftInvoice(tenant, member, { type: 'angebot' });
    expect((await http.post(`/api/invoices/${q.id}/convert`, {}, { token: viewer.token })).status).toBe(403);
    expect((await http.post(`/api/invoices/${q.id}/convert`, {}, { token: member.token })).status).toBe(201);
    expect((await http.get('/api/invoices')).status).toBe(401);
  });

  it('another tenant’s invoice is 404 on every route and never listed', async () => {
    const a = await setup();
    const b = await createTeam();
    const draft = await createDraftInvoice(a.tenant, a.member);
    const sent = await createSentInvoice(a.tenant, a.member);
    const quote = await createDraftInvoice(a.tenant, a.member, { type: 'angebot' });
    const t = b.admin.token;
    const calls = [
      http.get(`/api/invoices/${draft.id}`, { token: t }),
      http.put(`/api/invoices/${draft.id}`, { notes: 'x' }, { token: t }),
      http.delete(`/api/invoices/${draft.id}`, { token: t }),
      http.post(`/api/invoices/${draft.id}/send`, { to: 'x@y.at' }, { token: t }),
      http.post(`/api/invoices/${sent.id}/payments`, { amount: '1.00', date: todayVienna(), method: 'cash' }, { token: t }),
      http.post(`/api/invoices/${sent.id}/cancel`, {}, { token: t }),
      http.post(`/api/invoices/${quote.id}/convert`, {}, { token: t }),
    ];
    for (const r of await Promise.all(calls)) {
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('NOT_FOUND');
    }
    const list = await http.get(`/api/invoices?customerId=${draft.customerId}`, { token: t });
    expect(list.body.pagination.total).toBe(0);
    expect((await http.get('/api/invoices', { token: t })).body.data).toEqual([]);
    // nothing changed in tenant A
    expect((await http.get(`/api/invoices/${draft.id}`, { token: a.viewer.token })).body.status).toBe('entwurf');
    expect((await http.get(`/api/invoices/${sent.id}`, { token: a.viewer.token })).body.amountPaid).toBe('0.00');
  });
});
