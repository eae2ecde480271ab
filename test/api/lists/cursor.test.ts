import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type HttpResponse, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { expectError } from '../auth/authHelpers';
import { db } from '../../../shared/db';

/**
 * Cursor pagination through the real API (docs/lists.md): nextCursor walks a list in its order,
 * never skipping or repeating a row that existed when the walk started, also while rows are
 * inserted before, after and at the cursor's position; a cursor that is not the list's is 400;
 * page keeps working beside it. Customers and webhook logs (bare arrays) carry the cursor in
 * X-Next-Cursor.
 */
type Team = Awaited<ReturnType<typeof createTeam>>;
let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;
let team: Team;

beforeAll(async () => {
  server = await startTestServer();
  team = await createTeam();
  http = client(server.url, { token: team.admin.token });
});
afterAll(async () => server?.close());

const DAYS = ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05'];

/** Invoices written straight to the table: one statement shares created_at, so ties are decided by id. */
async function insertInvoices(n: number, seed: number, status = 'offen'): Promise<string[]> {
  const rows = Array.from({ length: n }, (_, i) => ({
    tenantId: team.tenant.id,
    type: 'rechnung',
    status,
    issueDate: DAYS[(seed + i * 3) % DAYS.length],
    totalNet: '1.00',
    totalTax: '0.00',
    totalGross: '1.00',
    taxBreakdown: JSON.stringify([]),
  }));
  return (await db()('invoices').insert(rows).returning('id')).map((r) => r.id);
}

describe('GET /api/invoices with cursor', () => {
  it('walks every existing row exactly once while rows are inserted concurrently', async () => {
    const existing = await insertInvoices(40, 0);
    const more = await insertInvoices(13, 1);
    existing.push(...more);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const qs = new URLSearchParams({ status: 'offen', limit: '7', ...(cursor ? { cursor } : {}) });
      // Inserts racing the read: new rows land before, at and after the cursor's position.
      const [res] = await Promise.all([http.get(`/api/invoices?${qs}`), insertInvoices(3, pages)]);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      seen.push(...res.body.data.map((r: { id: string }) => r.id));
      cursor = res.body.pagination.nextCursor;
      expect(res.body.pagination.total).toBeGreaterThanOrEqual(existing.length);
      pages++;
    } while (cursor && pages < 100);
    expect(cursor).toBeNull();
    expect(new Set(seen).size).toBe(seen.length); // nothing repeated
    for (const id of existing) expect(seen).toContain(id); // nothing existing skipped
    // In the list's order: issue date desc, created desc, id desc.
    const order = await db()('invoices')
      .whereIn('id', seen)
      .orderBy([
        { column: 'issueDate', order: 'desc' },
        { column: 'createdAt', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .pluck('id');
    expect(seen).toEqual(order);
  });

  it('page and cursor give the same rows; total and totalPages come with both', async () => {
    const byPage = await http.get('/api/invoices?status=offen&limit=5&page=1');
    const second = await http.get('/api/invoices?status=offen&limit=5&page=2');
    const byCursor = await http.get(`/api/invoices?status=offen&limit=5&cursor=${byPage.body.pagination.nextCursor}`);
    expect(byCursor.body.data.map((r: { id: string }) => r.id)).toEqual(second.body.data.map((r: { id: string }) => r.id));
    expect(byCursor.body.pagination.total).toBe(byPage.body.pagination.total);
    expect(byCursor.body.pagination.totalPages).toBe(Math.ceil(byPage.body.pagination.total / 5));
  });

  it('a cursor that is not this list’s is 400, never a 500', async () => {
    const ok = (await http.get('/api/invoices?limit=1')).body.pagination.nextCursor as string;
    const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const supplierCursor = enc(['suppliers', 'A', '00000000-0000-4000-8000-000000000000']);
    for (const bad of [
      'not base64 !',
      'abc',
      enc({ a: 1 }),
      enc(['invoices', '2026-02-30', '2026-01-01 00:00:00+00', '00000000-0000-4000-8000-000000000000']),
      enc(['invoices', '2026-01-01', 'yesterday', '00000000-0000-4000-8000-000000000000']),
      enc(['invoices', '2026-01-01', '2026-01-01 00:00:00+00', 'x']),
      enc(['invoices', '2026-01-01', '2026-01-01 00:00:00+00']),
      enc(['invoices', 1, 2, 3]),
      supplierCursor,
      `${ok.slice(0, -3)}%3D%3D`,
    ]) {
      expectError(await http.get(`/api/invoices?cursor=${encodeURIComponent(bad)}`), 400, 'INVALID_INPUT');
    }
    expectError(await http.get(`/api/invoices?cursor=${ok}&page=2`), 400, 'INVALID_INPUT');
    expectError(await http.get(`/api/suppliers?cursor=${ok}`), 400, 'INVALID_INPUT');
    // A sync page's cursor belongs to the sync order only.
    const sync = await http.get('/api/invoices?updatedSince=2000-01-01T00:00:00Z&limit=1');
    expectError(await http.get(`/api/invoices?cursor=${sync.body.pagination.nextCursor}`), 400, 'INVALID_INPUT');
  });

  it('the sync pages on with its nextCursor as with (updatedSince, afterId)', async () => {
    const since = '2000-01-01T00:00:00Z';
    const walk = async (next: (page: { data: Array<{ id: string; updatedAt: string }>; pagination: { nextCursor: string | null } }) => string | null) => {
      const ids: string[] = [];
      let qs: string | null = `updatedSince=${since}&limit=9`;
      while (qs) {
        const res = await http.get(`/api/invoices?${qs}`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        ids.push(...res.body.data.map((r: { id: string }) => r.id));
        qs = next(res.body);
      }
      return ids;
    };
    const byCursor = await walk((p) => (p.pagination.nextCursor ? `updatedSince=${since}&limit=9&cursor=${p.pagination.nextCursor}` : null));
    const byAfterId = await walk((p) => {
      if (p.data.length < 9) return null;
      const last = p.data[p.data.length - 1];
      return `updatedSince=${last.updatedAt}&afterId=${last.id}&limit=9`;
    });
    expect(byCursor).toEqual(byAfterId);
    expect(new Set(byCursor).size).toBe(byCursor.length);
  });
});

describe('suppliers, customers and webhook logs by cursor', () => {
  it('suppliers: nextCursor walks all by name, total from the counter', async () => {
    const t = team.tenant.id;
    await db()('suppliers').insert(['Zeta', 'Alpha', 'Alpha', 'Mitte', 'beta'].map((name) => ({ tenantId: t, name })));
    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const res: HttpResponse = await http.get(`/api/suppliers?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.pagination.total).toBe(5);
      names.push(...res.body.data.map((s: { name: string }) => s.name));
      cursor = res.body.pagination.nextCursor;
    } while (cursor);
    const all = await http.get('/api/suppliers?limit=100');
    expect(names).toEqual(all.body.data.map((s: { name: string }) => s.name));
    expect(names).toHaveLength(5);
  });

  it('customers: a bare array, the cursor and total in headers; without limit all of them as before', async () => {
    const t = team.tenant.id;
    await db()('customers').insert(['Otto', 'Anna', 'Anna', 'Emil', 'Berta', 'Carl', 'Dora'].map((name) => ({ tenantId: t, name })));
    const all = await http.get('/api/customers');
    expect(Array.isArray(all.body)).toBe(true);
    expect(all.headers.get('x-next-cursor')).toBeNull();
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const res: HttpResponse = await http.get(`/api/customers?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.headers.get('x-total-count')).toBe(String(all.body.length));
      ids.push(...res.body.map((c: { id: string }) => c.id));
      cursor = res.headers.get('x-next-cursor');
    } while (cursor);
    expect(ids).toEqual(all.body.map((c: { id: string }) => c.id));
    expectError(await http.get('/api/customers?cursor=eyJ4Ijox'), 400, 'INVALID_INPUT');
  });

  it('webhook logs: X-Next-Cursor walks newest first', async () => {
    const t = team.tenant.id;
    const base = Date.parse('2026-11-01T00:00:00Z');
    await db()('webhookEvents').insert(
      Array.from({ length: 11 }, (_, i) => ({ tenantId: t, provider: 'stripe', status: 'processed', receivedAt: new Date(base + (i % 4) * 1000) })),
    );
    const all = await http.get('/api/connectors/stripe/webhook-logs?limit=200');
    expect(all.body).toHaveLength(11);
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const res: HttpResponse = await http.get(`/api/connectors/stripe/webhook-logs?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      ids.push(...res.body.map((e: { id: string }) => e.id));
      cursor = res.headers.get('x-next-cursor');
    } while (cursor);
    expect(ids).toEqual(all.body.map((e: { id: string }) => e.id));
    expectError(await http.get('/api/connectors/stripe/webhook-logs?cursor=abc'), 400, 'INVALID_INPUT');
  });
});
