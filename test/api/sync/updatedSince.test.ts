import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createDraftInvoice, createSentInvoice, createSupplier, defaultItems } from '../../helpers/invoiceFactory';
import { expectError } from '../auth/authHelpers';
import { db } from '../../../shared/db';

/**
 * Incremental sync through the real API (docs/sync.md): after a point in time, the invoice,
 * customer and supplier lists with updatedSince hold exactly the records created, changed or
 * deleted since (deleted ones with deletedAt), in (updatedAt, id) order, and the documented loop
 * (updatedSince + afterId of the last record) pages through them exactly once each, also when
 * many records share one timestamp.
 */
type Team = Awaited<ReturnType<typeof createTeam>>;
let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;
let team: Team;
let other: Team;

beforeAll(async () => {
  server = await startTestServer();
  team = await createTeam();
  other = await createTeam();
  http = client(server.url, { token: team.admin.token });
});
afterAll(async () => server?.close());

const pause = (ms = 25) => new Promise((r) => setTimeout(r, ms));
type Rec = { id: string; updatedAt: string; deletedAt: string | null };

/** The documented loop: page with the last record's (updatedAt, id) until a short page. */
async function syncAll(path: string, since: string, limit: number): Promise<Rec[]> {
  const seen: Rec[] = [];
  let cursor: { updatedSince: string; afterId?: string } = { updatedSince: since };
  for (let guard = 0; guard < 100; guard++) {
    const res = await http.get(`${path}?${new URLSearchParams({ ...cursor, limit: String(limit) })}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const page: Rec[] = Array.isArray(res.body) ? res.body : res.body.data;
    seen.push(...page);
    if (page.length < limit) return seen;
    const last = page[page.length - 1];
    cursor = { updatedSince: last.updatedAt, afterId: last.id };
  }
  throw new Error('the sync loop did not end');
}

const byUpdatedAtThenId = (a: Rec, b: Rec) => (a.updatedAt === b.updatedAt ? (a.id < b.id ? -1 : 1) : a.updatedAt < b.updatedAt ? -1 : 1);

describe('updatedSince returns exactly what changed, deleted records included', () => {
  it('customers, suppliers and invoices: create, update, delete, then query', async () => {
    // Before the cut: records that will change, and records that will not.
    const cKeep = await createCustomer(team.tenant, { name: 'Unverändert' });
    const cEdit = await createCustomer(team.tenant, { name: 'Wird geändert' });
    const cDel = await createCustomer(team.tenant, { name: 'Wird gelöscht' });
    const sKeep = await createSupplier(team.tenant, { name: 'Lieferant bleibt' });
    const sEdit = await createSupplier(team.tenant, { name: 'Lieferant alt' });
    const sDel = await createSupplier(team.tenant, { name: 'Lieferant weg' });
    const iKeep = await createDraftInvoice(team.tenant, team.admin, { customerId: cKeep.id });
    const iEdit = await createDraftInvoice(team.tenant, team.admin, { customerId: cKeep.id });
    const iDel = await createDraftInvoice(team.tenant, team.admin, { customerId: cKeep.id });
    const iPaid = await createSentInvoice(team.tenant, team.admin, { customerId: cKeep.id });
    await pause();
    const since = new Date().toISOString();
    await pause();

    expect((await http.put(`/api/customers/${cEdit.id}`, { name: 'Geändert' })).status).toBe(200);
    expect((await http.delete(`/api/customers/${cDel.id}`)).status).toBe(204);
    const cNew = (await http.post('/api/customers', { name: 'Neu' })).body;
    expect((await http.put(`/api/suppliers/${sEdit.id}`, { name: 'Lieferant neu' })).status).toBe(200);
    expect((await http.delete(`/api/suppliers/${sDel.id}`)).status).toBe(204);
    const sNew = (await http.post('/api/suppliers', { name: 'Lieferant frisch' })).body;
    const edited = await http.put(`/api/invoices/${iEdit.id}`, { type: 'rechnung', customerId: cKeep.id, items: defaultItems(), notes: 'geändert' });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect((await http.delete(`/api/invoices/${iDel.id}`)).status).toBe(204);
    const paid = await http.post(`/api/invoices/${iPaid.id}/payments`, { amount: '10.00', date: '2026-11-27', method: 'bank_transfer' });
    expect(paid.status, JSON.stringify(paid.body)).toBeLessThan(300);
    const iNew = (await http.post('/api/invoices', { type: 'rechnung', customerId: cKeep.id, items: defaultItems() })).body;
    // Another tenant's change in the same window.
    await http.post('/api/customers', { name: 'Fremd' }, { token: other.admin.token });

    const q = `updatedSince=${encodeURIComponent(since)}`;
    const customers = await http.get(`/api/customers?${q}&limit=100`);
    expect(customers.status).toBe(200);
    expect(Array.isArray(customers.body)).toBe(true);
    expect(customers.body.map((c: Rec) => c.id).sort()).toEqual([cEdit.id, cDel.id, cNew.id].sort());
    expect(customers.body).toEqual([...customers.body].sort(byUpdatedAtThenId));
    expect(customers.body.find((c: Rec) => c.id === cDel.id).deletedAt).toEqual(expect.any(String));
    expect(customers.body.find((c: Rec) => c.id === cEdit.id)).toMatchObject({ name: 'Geändert', deletedAt: null });

    const suppliers = await http.get(`/api/suppliers?${q}&limit=100`);
    expect(suppliers.body.data.map((s: Rec) => s.id).sort()).toEqual([sEdit.id, sDel.id, sNew.id].sort());
    expect(suppliers.body.pagination).toMatchObject({ total: 3 });
    expect(suppliers.body.data).toEqual([...suppliers.body.data].sort(byUpdatedAtThenId));
    expect(suppliers.body.data.find((s: Rec) => s.id === sDel.id).deletedAt).toEqual(expect.any(String));

    const invoices = await http.get(`/api/invoices?${q}&limit=100`);
    expect(invoices.body.data.map((i: Rec) => i.id).sort()).toEqual([iEdit.id, iDel.id, iPaid.id, iNew.id].sort());
    expect(invoices.body.data).toEqual([...invoices.body.data].sort(byUpdatedAtThenId));
    expect(invoices.body.data.find((i: Rec) => i.id === iDel.id).deletedAt).toEqual(expect.any(String));
    expect(invoices.body.data.find((i: Rec) => i.id === iPaid.id)).toMatchObject({ status: 'teilbezahlt', deletedAt: null });

    // The ordinary lists are unchanged: no deleted records, deletedAt null on every entry.
    const plain = await http.get('/api/customers');
    expect(plain.body.map((c: Rec) => c.id)).not.toContain(cDel.id);
    const plainInvoices = await http.get('/api/invoices?limit=100');
    expect(plainInvoices.body.data.map((i: Rec) => i.id)).not.toContain(iDel.id);
    expect(plainInvoices.body.data.every((i: Rec) => i.deletedAt === null)).toBe(true);
    expect(plainInvoices.body.data.map((i: Rec) => i.id)).toContain(iKeep.id);
    expect((await http.get('/api/suppliers?limit=100')).body.data.map((s: Rec) => s.id)).toContain(sKeep.id);

    // A later updatedSince than every change: nothing.
    const later = new Date(Date.now() + 60_000).toISOString();
    expect((await http.get(`/api/customers?updatedSince=${encodeURIComponent(later)}`)).body).toEqual([]);
    expect((await http.get(`/api/invoices?updatedSince=${encodeURIComponent(later)}`)).body.data).toEqual([]);
  });
});

describe('the sync loop', () => {
  it('pages with (updatedAt, id) through records that share one timestamp, each exactly once', async () => {
    const t = await createTeam();
    const asT = client(server.url, { token: t.admin.token });
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await createCustomer(t.tenant, { name: `Kunde ${i}` })).id);
    // Seven customers changed in one transaction (one now()), as an import or a migration would.
    const stamp = new Date('2026-11-27T10:00:00.123Z');
    await db()('customers').where({ tenantId: t.tenant.id }).update({ updatedAt: stamp });
    const all: Rec[] = [];
    let cursor: Record<string, string> = { updatedSince: '2026-11-27T10:00:00.123Z' };
    for (let round = 0; round < 10; round++) {
      const res = await asT.get(`/api/customers?${new URLSearchParams({ ...cursor, limit: '3' })}`);
      expect(res.status).toBe(200);
      all.push(...res.body);
      if (res.body.length < 3) break;
      const last = res.body[res.body.length - 1];
      expect(last.updatedAt).toBe(stamp.toISOString());
      cursor = { updatedSince: last.updatedAt, afterId: last.id };
    }
    expect(all.map((c) => c.id)).toEqual([...ids].sort());
  });

  it('the same loop over invoices and suppliers collects every change once', async () => {
    const t = await createTeam();
    const asT = client(server.url, { token: t.admin.token });
    const customer = await createCustomer(t.tenant);
    const invoiceIds: string[] = [];
    for (let i = 0; i < 5; i++) invoiceIds.push((await createDraftInvoice(t.tenant, t.admin, { customerId: customer.id })).id);
    const supplierIds: string[] = [];
    for (let i = 0; i < 4; i++) supplierIds.push((await createSupplier(t.tenant)).id);
    http = asT;
    try {
      const invoices = await syncAll('/api/invoices', '2000-01-01T00:00:00Z', 2);
      expect(invoices.map((r) => r.id).sort()).toEqual([...invoiceIds].sort());
      const suppliers = await syncAll('/api/suppliers', '2000-01-01T00:00:00Z', 3);
      expect(suppliers.map((r) => r.id).sort()).toEqual([...supplierIds].sort());
    } finally {
      http = client(server.url, { token: team.admin.token });
    }
  });
});

describe('bad input', () => {
  it('a malformed updatedSince or afterId, afterId without updatedSince → 400', async () => {
    for (const path of ['/api/customers', '/api/suppliers', '/api/invoices']) {
      expectError(await http.get(`${path}?updatedSince=yesterday`), 400, 'INVALID_INPUT');
      expectError(await http.get(`${path}?updatedSince=2026-11-27`), 400, 'INVALID_INPUT');
      expectError(await http.get(`${path}?updatedSince=2026-11-27T10:00:00Z&afterId=1`), 400, 'INVALID_INPUT');
      expectError(await http.get(`${path}?afterId=00000000-0000-4000-8000-000000000000`), 400, 'INVALID_INPUT');
    }
    // limit without updatedSince pages the live list by name (docs/lists.md); 0 is still out of range.
    expectError(await http.get('/api/customers?limit=0'), 400, 'INVALID_INPUT');
    expectError(await http.get('/api/customers?updatedSince=2026-11-27T10:00:00Z&limit=101'), 400, 'INVALID_INPUT');
  });
});
