import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { track } from '../../helpers/audit';
import { createCustomer, createDraftInvoice, createSentInvoice, recordPayment, cancelInvoice } from '../../helpers/invoiceFactory';

let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;
beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});
afterAll(async () => server.close());

const SPEC_FIELDS = ['id', 'name', 'company', 'email', 'phone', 'address', 'vatId', 'currency', 'paymentTermDays', 'color', 'createdAt'];

describe('customers CRUD', () => {
  it('POST → 201 with spec fields; GET list is a bare array of live customers; GET one', async () => {
    const { member, viewer } = await createTeam();
    const body = {
      name: 'Maria Muster',
      company: 'Muster GmbH',
      email: 'maria@muster.at',
      phone: '+43 1 234 56 78',
      address: 'Ring 1, 1010 Wien',
      vatId: 'atu 123 456 78',
      currency: 'EUR',
      paymentTermDays: 30,
      color: '#A0b',
    };
    const res = await http.post('/api/customers', body, { token: member.token });
    expect(res.status).toBe(201);
    for (const f of SPEC_FIELDS) expect(res.body).toHaveProperty(f);
    expect(res.body).toMatchObject({ ...body, vatId: 'ATU12345678', country: 'AT', deletedAt: null });

    const list = await http.get('/api/customers', { token: viewer.token });
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.body.map((c: any) => c.id)).toEqual([res.body.id]);

    const one = await http.get(`/api/customers/${res.body.id}`, { token: viewer.token });
    expect(one.status).toBe(200);
    expect(one.body.name).toBe('Maria Muster');
  });

  it.each([
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: '   ' }, 'name'],
    [{ name: 'A', vatId: 'ATU1234567' }, 'vatId'],
    [{ name: 'A', vatId: 'DE12345678' }, 'vatId'],
    [{ name: 'A', vatId: 'XX123456789' }, 'vatId'],
    [{ name: 'A', color: 'red' }, 'color'],
    [{ name: 'A', color: '#12345' }, 'color'],
    [{ name: 'A', currency: 'EURO' }, 'currency'],
    [{ name: 'A', currency: 'XYZ' }, 'currency'],
    [{ name: 'A', email: 'not-an-email' }, 'email'],
    [{ name: 'A', paymentTermDays: -1 }, 'paymentTermDays'],
    [{ name: 'A', paymentTermDays: 1.5 }, 'paymentTermDays'],
    [{ name: 'A', unknown: 1 }, 'unknown'],
  ])('POST %j → 400 on %s', async (body, field) => {
    const { member } = await createTeam();
    const res = await http.post('/api/customers', body, { token: member.token });
    expect(res.status).toBe(400);
    expect(['INVALID_INPUT', 'MISSING_FIELD']).toContain(res.body.error.code);
    expect(res.body.error.details.map((d: any) => d.field)).toContain(field);
  });

  it('accepts valid VAT IDs of other member states', async () => {
    const { member } = await createTeam();
    for (const vatId of ['DE123456789', 'EL123456789', 'NL123456789B01', 'FRXX123456789']) {
      const res = await http.post('/api/customers', { name: 'A', vatId }, { token: member.token });
      expect(res.status, vatId).toBe(201);
    }
  });

  it('PUT (manager) updates the fields present, null clears; → 200', async () => {
    const { tenant, manager } = await createTeam();
    const c = await createCustomer(tenant, { name: 'Alt', email: 'a@b.at', color: '#fff' });
    const res = await http.put(`/api/customers/${c.id}`, { name: 'Neu', color: null, paymentTermDays: 7 }, { token: manager.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Neu', email: 'a@b.at', color: null, paymentTermDays: 7 });
    const bad = await http.put(`/api/customers/${c.id}`, { vatId: 'ATU1' }, { token: manager.token });
    expect(bad.status).toBe(400);
  });

  it('DELETE: 204 soft delete; gone from list and GET; cannot get new invoices', async () => {
    const { tenant, manager, member } = await createTeam();
    const c = await createCustomer(tenant);
    const del = await http.delete(`/api/customers/${c.id}`, { token: manager.token });
    expect(del.status).toBe(204);
    expect((await http.get('/api/customers', { token: member.token })).body).toEqual([]);
    expect((await http.get(`/api/customers/${c.id}`, { token: member.token })).status).toBe(404);
    expect((await http.delete(`/api/customers/${c.id}`, { token: manager.token })).status).toBe(404);
    const inv = await http.post(
      '/api/invoices',
      { type: 'rechnung', customerId: c.id, items: [{ description: 'x', quantity: 1, unitPrice: '1.00', taxRate: '20' }] },
      { token: member.token },
    );
    expect(inv.status).toBe(400);
    expect(inv.body.error.code).toBe('INVALID_INPUT');
    expect(inv.body.error.details[0].field).toBe('customerId');
  });

  it('DELETE with an open or partially paid invoice → 400 DEPENDENCY; with drafts or settled ones → 204', async () => {
    const { tenant, manager, member } = await createTeam();
    const c = await createCustomer(tenant);
    const open = await createSentInvoice(tenant, member, { customerId: c.id });
    let res = await http.delete(`/api/customers/${c.id}`, { token: manager.token });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('DEPENDENCY');
    await recordPayment(tenant, member, open.id, { amount: '100.00' });
    res = await http.delete(`/api/customers/${c.id}`, { token: manager.token });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('DEPENDENCY');
    expect(open.totalGross).toBe('1494.60');
    await recordPayment(tenant, member, open.id, { amount: '1394.60' });
    await createDraftInvoice(tenant, member, { customerId: c.id });
    res = await http.delete(`/api/customers/${c.id}`, { token: manager.token });
    expect(res.status).toBe(204);
    // the finalized invoice keeps its customer via the snapshot
    const inv = await http.get(`/api/invoices/${open.id}`, { token: member.token });
    expect(inv.body.customer.name).toBe(c.name);
  });

  it('a cancelled invoice does not block the delete', async () => {
    const { tenant, manager, member } = await createTeam();
    const c = await createCustomer(tenant);
    const inv = await createSentInvoice(tenant, member, { customerId: c.id });
    await cancelInvoice(tenant, manager, inv.id);
    expect((await http.delete(`/api/customers/${c.id}`, { token: manager.token })).status).toBe(204);
  });
});

describe('customers: roles and tenant isolation', () => {
  it('viewer reads only; member creates; manager updates and deletes', async () => {
    const { tenant, viewer, member } = await createTeam();
    const c = await createCustomer(tenant);
    expect((await http.get('/api/customers', { token: viewer.token })).status).toBe(200);
    expect((await http.post('/api/customers', { name: 'x' }, { token: viewer.token })).status).toBe(403);
    expect((await http.put(`/api/customers/${c.id}`, { name: 'x' }, { token: member.token })).status).toBe(403);
    const del = await http.delete(`/api/customers/${c.id}`, { token: member.token });
    expect(del.status).toBe(403);
    expect(del.body.error.code).toBe('FORBIDDEN');
    expect((await http.get('/api/customers')).status).toBe(401);
  });

  it('another tenant’s customer is 404 on every route and absent from lists', async () => {
    const a = await createTeam();
    const b = await createTeam();
    const c = await createCustomer(a.tenant);
    expect((await http.get(`/api/customers/${c.id}`, { token: b.admin.token })).status).toBe(404);
    expect((await http.put(`/api/customers/${c.id}`, { name: 'x' }, { token: b.admin.token })).status).toBe(404);
    expect((await http.delete(`/api/customers/${c.id}`, { token: b.admin.token })).status).toBe(404);
    expect((await http.get('/api/customers', { token: b.admin.token })).body).toEqual([]);
    const inv = await http.post(
      '/api/invoices',
      { type: 'rechnung', customerId: c.id, items: [{ description: 'x', quantity: 1, unitPrice: '1.00', taxRate: '20' }] },
      { token: b.admin.token },
    );
    expect(inv.status).toBe(400);
    expect((await http.get(`/api/customers/${c.id}`, { token: a.viewer.token })).status).toBe(200);
  });

  it('malformed id → 400', async () => {
    const { viewer } = await createTeam();
    expect((await http.get('/api/customers/not-a-uuid', { token: viewer.token })).status).toBe(400);
  });
});

describe('customers: audit log', () => {
  it('create, update and delete each write one row with actor, action, entity and time; refused ones none', async () => {
    const { tenant, member, manager } = await createTeam();
    const as = (u: { id: string }, entityId: string, action: string) => ({ action, entityType: 'customer', entityId, actorUserId: u.id });
    const created = await track(
      tenant.id,
      (r: any) => [as(member, r.body.id, 'customer.created')],
      () => http.post('/api/customers', { name: 'Audit' }, { token: member.token }),
    );
    expect(created.status).toBe(201);
    const id = created.body.id;
    await track(
      tenant.id,
      () => [as(manager, id, 'customer.updated')],
      () => http.put(`/api/customers/${id}`, { name: 'Neu', color: '#000' }, { token: manager.token }),
    );
    await track(
      tenant.id,
      () => [],
      () => http.put(`/api/customers/${id}`, { vatId: 'ATU1' }, { token: manager.token }),
    );
    await track(
      tenant.id,
      () => [as(manager, id, 'customer.deleted')],
      () => http.delete(`/api/customers/${id}`, { token: manager.token }),
    );
    await track(
      tenant.id,
      () => [],
      () => http.delete(`/api/customers/${id}`, { token: manager.token }),
    );
  });
});
