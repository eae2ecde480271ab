import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createDraftInvoice, createSentInvoice } from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';
import { todayVienna } from '../../../shared/domain/dates';

let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;
beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});
afterAll(async () => server.close());

const year = Number(todayVienna().slice(0, 4));

describe('concurrency', () => {
  it('50 parallel sends of 50 drafts → 50 distinct consecutive numbers', async () => {
    const { tenant, member } = await createTeam();
    const customer = await createCustomer(tenant);
    const drafts = await Promise.all(Array.from({ length: 50 }, () => createDraftInvoice(tenant, member, { customerId: customer.id })));
    const results = await Promise.all(drafts.map((d) => http.post(`/api/invoices/${d.id}/send`, { to: 'a@b.at' }, { token: member.token })));
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(202));
    const numbers = results.map((r) => r.body.invoice.number as string).sort();
    expect(numbers).toEqual(Array.from({ length: 50 }, (_, i) => `RE-${year}-${String(i + 1).padStart(5, '0')}`));
    const seq = await db()('invoiceNumberSequences').where({ tenantId: tenant.id, type: 'rechnung', year }).first();
    expect(seq.lastValue).toBe(50);
  });

  it('two parallel payments that together exceed the amount → exactly one 201 and one 422', async () => {
    const { tenant, member } = await createTeam();
    const inv = await createSentInvoice(tenant, member); // 1494.60
    const body = { amount: '1000.00', date: todayVienna(), method: 'bank_transfer' };
    const results = await Promise.all([0, 1].map(() => http.post(`/api/invoices/${inv.id}/payments`, body, { token: member.token })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 422]);
    const after = await http.get(`/api/invoices/${inv.id}`, { token: member.token });
    expect(after.body).toMatchObject({ amountPaid: '1000.00', status: 'teilbezahlt' });
    expect(after.body.payments).toHaveLength(1);
  });

  it('a customer edit racing seller changes in the settings: both lock the drafts in one order, no deadlock reaches a client', async () => {
    const { tenant, admin } = await createTeam();
    const customer = await createCustomer(tenant);
    await Promise.all(Array.from({ length: 30 }, () => createDraftInvoice(tenant, admin, { customerId: customer.id })));
    for (let round = 0; round < 8; round++) {
      const results = await Promise.all([
        ...[0, 1, 2].map((i) => http.put('/api/settings', { address: `Ring ${round}-${i}\n1010 Wien` }, { token: admin.token })),
        ...[0, 1, 2].map((i) => http.put(`/api/customers/${customer.id}`, { name: `Kunde ${round}-${i}` }, { token: admin.token })),
      ]);
      expect(
        results.map((r) => r.status),
        JSON.stringify(results.map((r) => r.body)),
      ).toEqual(Array(6).fill(200));
    }
  });

  it('the same draft sent twice in parallel gets one number', async () => {
    const { tenant, member } = await createTeam();
    const d = await createDraftInvoice(tenant, member);
    const results = await Promise.all([0, 1].map(() => http.post(`/api/invoices/${d.id}/send`, { to: 'a@b.at' }, { token: member.token })));
    expect(results.map((r) => r.status)).toEqual([202, 202]);
    expect(new Set(results.map((r) => r.body.invoice.number)).size).toBe(1);
    const seq = await db()('invoiceNumberSequences').where({ tenantId: tenant.id, type: 'rechnung' }).first();
    expect(seq.lastValue).toBe(1);
  });
});

describe('Idempotency-Key', () => {
  it('POST /api/invoices: same key + same body → same response, one row; other body → 409 DUPLICATE', async () => {
    const { tenant, member } = await createTeam();
    const customer = await createCustomer(tenant);
    const key = randomUUID();
    const body = { type: 'rechnung', customerId: customer.id, items: [{ description: 'x', quantity: 1, unitPrice: '10.00', taxRate: '20' }] };
    const first = await http.post('/api/invoices', body, { token: member.token, headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(201);
    // same body with keys in another order
    const reordered = { items: body.items, customerId: body.customerId, type: body.type };
    const second = await http.post('/api/invoices', reordered, { token: member.token, headers: { 'Idempotency-Key': key } });
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(1);
    const other = await http.post('/api/invoices', { ...body, notes: 'anders' }, { token: member.token, headers: { 'Idempotency-Key': key } });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('DUPLICATE');
    // a new key creates a new invoice; no key always creates
    expect((await http.post('/api/invoices', body, { token: member.token, headers: { 'Idempotency-Key': randomUUID() } })).status).toBe(201);
    expect((await http.post('/api/invoices', body, { token: member.token })).status).toBe(201);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(3);
  });

  it('concurrent duplicates with one key execute once', async () => {
    const { tenant, member } = await createTeam();
    const customer = await createCustomer(tenant);
    const key = randomUUID();
    const body = { type: 'rechnung', customerId: customer.id, items: [{ description: 'x', quantity: 1, unitPrice: '10.00', taxRate: '20' }] };
    const results = await Promise.all(
      Array.from({ length: 8 }, () => http.post('/api/invoices', body, { token: member.token, headers: { 'Idempotency-Key': key } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(1);
  });

  it('payments and send: a retried request does not pay or send twice', async () => {
    const { tenant, member } = await createTeam();
    const inv = await createSentInvoice(tenant, member);
    const key = randomUUID();
    const body = { amount: '100.00', date: todayVienna(), method: 'cash' };
    const results = await Promise.all(
      [0, 1, 2].map(() => http.post(`/api/invoices/${inv.id}/payments`, body, { token: member.token, headers: { 'Idempotency-Key': key } })),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201, 201]);
    expect(new Set(results.map((r) => r.body.payment.id)).size).toBe(1);
    expect(await db()('payments').where({ invoiceId: inv.id })).toHaveLength(1);
    const other = await http.post(
      `/api/invoices/${inv.id}/payments`,
      { ...body, amount: '5.00' },
      { token: member.token, headers: { 'Idempotency-Key': key } },
    );
    expect(other.status).toBe(409);

    const d = await createDraftInvoice(tenant, member);
    const sendKey = randomUUID();
    const s1 = await http.post(`/api/invoices/${d.id}/send`, { to: 'a@b.at' }, { token: member.token, headers: { 'Idempotency-Key': sendKey } });
    const s2 = await http.post(`/api/invoices/${d.id}/send`, { to: 'a@b.at' }, { token: member.token, headers: { 'Idempotency-Key': sendKey } });
    expect([s1.status, s2.status]).toEqual([202, 202]);
    expect(s2.body).toEqual(s1.body);
    expect(await db()('deliveries').where({ invoiceId: d.id })).toHaveLength(1);
  });

  it('convert: a retried request gives one draft, not two', async () => {
    const { tenant, member } = await createTeam();
    const quote = await createDraftInvoice(tenant, member, { type: 'angebot' });
    const key = randomUUID();
    const results = await Promise.all(
      [0, 1].map(() => http.post(`/api/invoices/${quote.id}/convert`, undefined, { token: member.token, headers: { 'Idempotency-Key': key } })),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201]);
    expect(results[0].body.id).toBe(results[1].body.id);
    expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(1);
    expect(await db()('invoices').where({ tenantId: tenant.id, relatedInvoiceId: quote.id })).toHaveLength(1);
  });

  it('a failed request is not stored: the retry with the same key runs again', async () => {
    const { tenant, member } = await createTeam();
    const inv = await createSentInvoice(tenant, member);
    const key = randomUUID();
    const tooMuch = await http.post(
      `/api/invoices/${inv.id}/payments`,
      { amount: '9999.00', date: todayVienna(), method: 'cash' },
      { token: member.token, headers: { 'Idempotency-Key': key } },
    );
    expect(tooMuch.status).toBe(422);
    expect(await db()('idempotencyKeys').where({ tenantId: tenant.id, key })).toHaveLength(0);
  });

  it('keys are per tenant and per route; an over-long key → 400', async () => {
    const a = await createTeam();
    const b = await createTeam();
    const key = randomUUID();
    for (const t of [a, b]) {
      const c = await createCustomer(t.tenant);
      const res = await http.post(
        '/api/invoices',
        { type: 'rechnung', customerId: c.id, items: [{ description: 'x', quantity: 1, unitPrice: '1.00', taxRate: '20' }] },
        { token: t.member.token, headers: { 'Idempotency-Key': key } },
      );
      expect(res.status).toBe(201);
      expect(res.headers.get('idempotent-replayed')).toBeNull();
    }
    const c = await createCustomer(a.tenant);
    const res = await http.post(
      '/api/invoices',
      { type: 'rechnung', customerId: c.id, items: [{ description: 'x', quantity: 1, unitPrice: '1.00', taxRate: '20' }] },
      { token: a.member.token, headers: { 'Idempotency-Key': 'k'.repeat(300) } },
    );
    expect(res.status).toBe(400);
  });
});
