import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { track } from '../../helpers/audit';
import { createIncomingInvoice, createSupplier } from '../../helpers/invoiceFactory';

let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;
beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});
afterAll(async () => server.close());

describe('suppliers', () => {
  it('POST → 201; list uses {data, pagination}; GET one; PUT; DELETE → 204', async () => {
    const { member, manager, viewer } = await createTeam();
    const res = await http.post(
      '/api/suppliers',
      {
        name: 'Stripe Payments Europe',
        email: 'Billing@Stripe.com',
        vatId: 'IE3206488LH',
        iban: 'AT61 1904 3002 3457 3201',
        address: 'Dublin',
        merchantIds: { stripe: 'acct_123' },
      },
      { token: member.token },
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Stripe Payments Europe',
      email: 'billing@stripe.com',
      iban: 'AT611904300234573201',
      merchantIds: { stripe: 'acct_123' },
      country: 'IE',
    });

    const list = await http.get('/api/suppliers', { token: viewer.token });
    expect(list.status).toBe(200);
    expect(list.body.pagination).toEqual({ page: 1, limit: 25, total: 1, totalPages: 1, nextCursor: null });
    expect(list.body.data[0].id).toBe(res.body.id);

    expect((await http.get(`/api/suppliers/${res.body.id}`, { token: viewer.token })).body.name).toBe('Stripe Payments Europe');
    const upd = await http.put(`/api/suppliers/${res.body.id}`, { merchantIds: { paypal: 'PP1', bank: 'B1' } }, { token: manager.token });
    expect(upd.status).toBe(200);
    expect(upd.body.merchantIds).toEqual({ paypal: 'PP1', bank: 'B1' });

    expect((await http.delete(`/api/suppliers/${res.body.id}`, { token: manager.token })).status).toBe(204);
    expect((await http.get('/api/suppliers', { token: viewer.token })).body.data).toEqual([]);
  });

  it.each([
    [{}, 'name'],
    [{ name: 'x', iban: 'AT611904300234573202' }, 'iban'],
    [{ name: 'x', vatId: 'ATU1' }, 'vatId'],
    [{ name: 'x', merchantIds: { adyen: 'x' } }, 'merchantIds.adyen'],
    [{ name: 'x', email: 'nope' }, 'email'],
    [{ name: 'x', extra: true }, 'extra'],
  ])('POST %j → 400 on %s', async (body, field) => {
    const { member } = await createTeam();
    const res = await http.post('/api/suppliers', body, { token: member.token });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: any) => d.field)).toContain(field);
  });

  it('paging: limit 0/101 and page 0 → 400; page beyond the end → empty data with total', async () => {
    const { tenant, viewer } = await createTeam();
    for (let i = 0; i < 3; i++) await createSupplier(tenant, { name: `S${i}` });
    for (const q of ['limit=0', 'limit=101', 'page=0', 'page=abc']) {
      expect((await http.get(`/api/suppliers?${q}`, { token: viewer.token })).status, q).toBe(400);
    }
    const p2 = await http.get('/api/suppliers?limit=2&page=2', { token: viewer.token });
    expect(p2.body.data.map((s: any) => s.name)).toEqual(['S2']);
    expect(p2.body.pagination).toEqual({ page: 2, limit: 2, total: 3, totalPages: 2, nextCursor: null });
    const p9 = await http.get('/api/suppliers?limit=2&page=9', { token: viewer.token });
    expect(p9.body).toEqual({ data: [], pagination: { page: 9, limit: 2, total: 3, totalPages: 2, nextCursor: null } });
  });

  it('DELETE with an open incoming invoice → 400 DEPENDENCY', async () => {
    const { tenant, manager } = await createTeam();
    const s = await createSupplier(tenant);
    await createIncomingInvoice(tenant, manager, { supplierId: s.id });
    const res = await http.delete(`/api/suppliers/${s.id}`, { token: manager.token });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('DEPENDENCY');
  });

  it('roles and tenant isolation', async () => {
    const a = await createTeam();
    const b = await createTeam();
    const s = await createSupplier(a.tenant);
    expect((await http.post('/api/suppliers', { name: 'x' }, { token: a.viewer.token })).status).toBe(403);
    expect((await http.put(`/api/suppliers/${s.id}`, { name: 'x' }, { token: a.member.token })).status).toBe(403);
    expect((await http.delete(`/api/suppliers/${s.id}`, { token: a.member.token })).status).toBe(403);
    expect((await http.get(`/api/suppliers/${s.id}`, { token: b.admin.token })).status).toBe(404);
    expect((await http.put(`/api/suppliers/${s.id}`, { name: 'x' }, { token: b.admin.token })).status).toBe(404);
    expect((await http.delete(`/api/suppliers/${s.id}`, { token: b.admin.token })).status).toBe(404);
    expect((await http.get('/api/suppliers', { token: b.admin.token })).body.pagination.total).toBe(0);
  });
});

describe('suppliers: audit log', () => {
  it('create, update and delete each write one row with actor, action, entity and time; refused ones none', async () => {
    const { tenant, member, manager } = await createTeam();
    const as = (u: { id: string }, entityId: string, action: string) => ({ action, entityType: 'supplier', entityId, actorUserId: u.id });
    const created = await track(
      tenant.id,
      (r: any) => [as(member, r.body.id, 'supplier.created')],
      () => http.post('/api/suppliers', { name: 'Audit' }, { token: member.token }),
    );
    expect(created.status).toBe(201);
    const id = created.body.id;
    await track(
      tenant.id,
      () => [as(manager, id, 'supplier.updated')],
      () => http.put(`/api/suppliers/${id}`, { name: 'Neu', merchantIds: { bank: 'B1' } }, { token: manager.token }),
    );
    await track(
      tenant.id,
      () => [],
      () => http.put(`/api/suppliers/${id}`, { vatId: 'ATU1' }, { token: manager.token }),
    );
    await track(
      tenant.id,
      () => [as(manager, id, 'supplier.deleted')],
      () => http.delete(`/api/suppliers/${id}`, { token: manager.token }),
    );
    await track(
      tenant.id,
      () => [],
      () => http.delete(`/api/suppliers/${id}`, { token: manager.token }),
    );
  });
});
