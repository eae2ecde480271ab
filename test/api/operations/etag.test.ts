import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createDraftInvoice, createSupplier, defaultItems, recordPayment, createSentInvoice } from '../../helpers/invoiceFactory';

let server: Awaited<ReturnType<typeof startTestServer>>;
let team: Awaited<ReturnType<typeof createTeam>>;
let http: TestClient;
beforeAll(async () => {
  server = await startTestServer();
  team = await createTeam();
  http = client(server.url, { token: team.manager.token });
});
afterAll(async () => server.close());

const WEAK_ETAG = /^W\/"[A-Za-z0-9_-]{20,}"$/;

/** GET with If-None-Match: 304 without a body. */
async function expectNotModified(path: string, ifNoneMatch: string, current = ifNoneMatch) {
  const res = await http.get(path, { headers: { 'If-None-Match': ifNoneMatch } });
  expect(res.status).toBe(304);
  expect(res.raw.length).toBe(0);
  expect(res.headers.get('etag')).toBe(current);
  return res;
}

describe('weak ETag on GET of a single resource', () => {
  it('invoice: ETag present, 304 on If-None-Match, new tag after an update', async () => {
    const inv = await createDraftInvoice(team.tenant, team.manager);
    const path = `/api/invoices/${inv.id}`;
    const first = await http.get(path);
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(WEAK_ETAG);
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    // Same content, same tag: the tag is a function of the JSON only.
    expect((await http.get(path)).headers.get('etag')).toBe(etag);
    await expectNotModified(path, etag);
    // A list of tags and a strong form of the same tag also match (weak comparison).
    await expectNotModified(path, `W/"other", ${etag}`, etag);
    await expectNotModified(path, etag.slice(2), etag);

    const updated = await http.put(path, { customerId: inv.customerId, items: defaultItems(), notes: 'Zahlbar binnen 14 Tagen' });
    expect(updated.status).toBe(200);
    const after = await http.get(path, { headers: { 'If-None-Match': etag } });
    expect(after.status).toBe(200);
    expect(after.body.notes).toBe('Zahlbar binnen 14 Tagen');
    const etag2 = after.headers.get('etag')!;
    expect(etag2).toMatch(WEAK_ETAG);
    expect(etag2).not.toBe(etag);
    await expectNotModified(path, etag2);
  });

  it('invoice: a recorded payment changes the tag', async () => {
    const inv = await createSentInvoice(team.tenant, team.manager);
    const path = `/api/invoices/${inv.id}`;
    const etag = (await http.get(path)).headers.get('etag')!;
    await recordPayment(team.tenant, team.manager, inv.id, { amount: '100.00' });
    const after = await http.get(path, { headers: { 'If-None-Match': etag } });
    expect(after.status).toBe(200);
    expect(after.body.status).toBe('teilbezahlt');
    expect(after.headers.get('etag')).not.toBe(etag);
  });

  it('customer: ETag, 304, new tag after PUT', async () => {
    const customer = await createCustomer(team.tenant);
    const path = `/api/customers/${customer.id}`;
    const first = await http.get(path);
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(WEAK_ETAG);
    await expectNotModified(path, etag);
    expect((await http.put(path, { name: 'Größl KG' })).status).toBe(200);
    const after = await http.get(path, { headers: { 'If-None-Match': etag } });
    expect(after.status).toBe(200);
    expect(after.body.name).toBe('Größl KG');
    expect(after.headers.get('etag')).not.toBe(etag);
    await expectNotModified(path, after.headers.get('etag')!);
  });

  it('supplier: ETag, 304, new tag after PUT', async () => {
    const supplier = await createSupplier(team.tenant);
    const path = `/api/suppliers/${supplier.id}`;
    const etag = (await http.get(path)).headers.get('etag')!;
    expect(etag).toMatch(WEAK_ETAG);
    await expectNotModified(path, etag);
    expect((await http.put(path, { name: 'Papier Müller GmbH' })).status).toBe(200);
    const after = await http.get(path, { headers: { 'If-None-Match': etag } });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(etag);
  });

  it('the tag is computed on the uncompressed JSON: gzip and identity responses carry the same tag', async () => {
    // An invoice with many lines is larger than the compression threshold (1 KiB).
    const items = Array.from({ length: 30 }, (_, i) => ({ description: `Position ${i + 1} Beratung`, quantity: '1', unitPrice: '10.00', taxRate: '20' }));
    const inv = await createDraftInvoice(team.tenant, team.manager, { items });
    const path = `/api/invoices/${inv.id}`;
    const raw = (encoding: string) =>
      new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
        const req = httpRequest(`${server.url}${path}`, { headers: { authorization: `Bearer ${team.manager.token}`, 'accept-encoding': encoding } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        });
        req.on('error', reject);
        req.end();
      });
    const plain = await raw('identity');
    const gz = await raw('gzip');
    expect(plain.status).toBe(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.etag).toBe(plain.headers.etag);
    expect(gunzipSync(gz.body).toString('utf8')).toBe(plain.body.toString('utf8'));
    expect(JSON.parse(plain.body.toString('utf8')).items).toHaveLength(30);
  });

  it('lists, errors and other methods get no ETag', async () => {
    expect((await http.get('/api/invoices')).headers.get('etag')).toBeNull();
    expect((await http.get('/api/customers')).headers.get('etag')).toBeNull();
    const missing = await http.get('/api/invoices/00000000-0000-4000-8000-000000000000', { headers: { 'If-None-Match': '*' } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('etag')).toBeNull();
    const customer = await createCustomer(team.tenant);
    const put = await http.put(`/api/customers/${customer.id}`, { name: 'Neu' });
    expect(put.status).toBe(200);
    expect(put.headers.get('etag')).toBeNull();
  });
});
