import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { startTestServer } from '../helpers/server';
import { client, type TestClient } from '../helpers/http';
import { createTeam, createUser } from '../helpers/factories';
import { createCustomer, createDraftInvoice, createSupplier } from '../helpers/invoiceFactory';
import { db } from '../../shared/db';
import { allRoutes, describeResponse, envelopeProblem, fillPath, paramNames, routeName, SQL_INJECTIONS } from './routes';

/**
 * Tenant isolation, driven by routeRegistry: tenant B's admin uses tenant A's ids on every route
 * that takes a tenant-owned id, with every method, and must get 404 — never A's data, never a
 * change to it. And list filters with injection strings never return another tenant's rows.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
let a: Awaited<ReturnType<typeof createTeam>>;
let b: Awaited<ReturnType<typeof createTeam>>;
let asB: TestClient;
const aIds: Record<string, string> = {};
let bCustomerId: string;

/** Which of A's resources a route's :id / :key refers to, by path. */
function resourceFor(fullPath: string): string | undefined {
  const table: [RegExp, string][] = [
    [/^\/api\/invoices\/:id/, 'invoice'],
    [/^\/api\/customers\/:id/, 'customer'],
    [/^\/api\/suppliers\/:id/, 'supplier'],
    [/^\/api\/users\/:id/, 'user'],
    [/^\/api\/reports\/ust\/submissions\/:id/, 'submission'],
    [/^\/api\/auth\/webauthn\/credentials\/:id/, 'webauthnCredential'],
    [/^\/api\/auth\/sessions\/:id/, 'session'],
    [/^\/api\/maintenance\/jobs\/:key/, 'maintenanceJob'],
    [/^\/api\/incoming-einvoices\/:id/, 'incomingEinvoice'],
    [/^\/api\/bank-statements\/:id/, 'bankStatement'],
    [/^\/api\/bank-transactions\/:id/, 'bankTransaction'],
    [/^\/api\/webhook-subscriptions\/:id/, 'webhookSubscription'],
    [/^\/api\/api-keys\/:id/, 'apiKey'],
    [/^\/api\/recurring-invoices\/:id/, 'recurringInvoice'],
    [/^\/api\/dunning-notices\/:id/, 'dunningNotice'],
  ];
  return table.find(([re]) => re.test(fullPath))?.[1];
}

/** A body that passes validation, so the 404 is the ownership check and not a 400 before it. */
function validBody(route: { method: string; fullPath: string }): unknown {
  const key = `${route.method.toUpperCase()} ${route.fullPath}`;
  const bodies: Record<string, unknown> = {
    'PUT /api/users/:id': { name: 'Übernommen' },
    'PUT /api/customers/:id': { name: 'Übernommen' },
    'PUT /api/suppliers/:id': { name: 'Übernommen' },
    'PUT /api/invoices/:id': { type: 'rechnung', customerId: bCustomerId, items: [{ description: 'x', quantity: 1, unitPrice: '1.00', taxRate: '20' }] },
    'POST /api/invoices/:id/send': {},
    'POST /api/invoices/:id/payments': { amount: '1.00', date: '2026-01-01', method: 'bank_transfer' },
    'POST /api/reports/ust/submissions/:id/resolve': { outcome: 'accepted' },
    'PUT /api/webhook-subscriptions/:id': { active: false },
    'POST /api/bank-transactions/:id/match': { invoiceId: randomUUID() },
    'PUT /api/recurring-invoices/:id': {
      customerId: bCustomerId,
      items: [{ description: 'x', quantity: 1, unitPrice: '1.00', taxRate: '20' }],
      interval: 'monthly',
      startDate: '2026-01-01',
      autoSend: false,
    },
  };
  if (key in bodies) return bodies[key];
  return undefined;
}

beforeAll(async () => {
  server = await startTestServer();
  a = await createTeam({ plan: 'business' });
  b = await createTeam({ plan: 'business' });
  asB = client(server.url, { token: b.admin.token });
  bCustomerId = (await createCustomer(b.tenant, { name: 'B Kunde' })).id;
  const customer = await createCustomer(a.tenant, { name: 'A Geheim KG', email: 'geheim@a.example' });
  aIds.customer = customer.id;
  aIds.supplier = (await createSupplier(a.tenant, { name: 'A Lieferant' })).id;
  aIds.invoice = (await createDraftInvoice(a.tenant, a.admin, { customerId: customer.id })).id;
  aIds.user = (await createUser(a.tenant, 'member')).id;
  const [sub] = await db()('reportSubmissions').insert({ tenantId: a.tenant.id, year: 2026, period: '2026-03', mode: 'test' }).returning('id');
  aIds.submission = sub.id;
  const [cred] = await db()('webauthnCredentials')
    .insert({ tenantId: a.tenant.id, userId: a.admin.id, credentialId: randomBytes(16).toString('base64url'), publicKey: randomBytes(32) })
    .returning('id');
  aIds.webauthnCredential = cred.id;
  const [session] = await db()('refreshTokens')
    .insert({
      tenantId: a.tenant.id,
      userId: a.admin.id,
      familyId: randomUUID(),
      tokenHash: randomBytes(32).toString('hex'),
      expiresAt: new Date(Date.now() + 3600_000),
    })
    .returning('familyId');
  aIds.session = session.familyId;
  const [incoming] = await db()('incomingEinvoices')
    .insert({ tenantId: a.tenant.id, original: Buffer.from('<Invoice/>'), mediaType: 'application/xml', sha256: 'x', size: 10 })
    .returning('id');
  aIds.incomingEinvoice = incoming.id;
  const [statement] = await db()('bankStatements')
    .insert({ tenantId: a.tenant.id, original: Buffer.from('<Document/>'), mediaType: 'application/xml', sha256: 'x', size: 11 })
    .returning('id');
  aIds.bankStatement = statement.id;
  const [bankTx] = await db()('bankTransactions')
    .insert({
      tenantId: a.tenant.id,
      statementId: statement.id,
      dedupKey: 'ref|A|1',
      account: 'AT611904300234573201',
      bookingDate: '2026-11-02',
      amount: '10.00',
      direction: 'credit',
      currency: 'EUR',
      counterpartyName: 'A Geheim KG',
    })
    .returning('id');
  aIds.bankTransaction = bankTx.id;
  const [hook] = await db()('webhookSubscriptions')
    .insert({ tenantId: a.tenant.id, url: 'https://hooks.example.com/a', events: ['invoice.paid'], secretEnc: 'x' })
    .returning('id');
  aIds.webhookSubscription = hook.id;
  const [apiKey] = await db()('apiKeys')
    .insert({ tenantId: a.tenant.id, name: 'A Geheim Key', role: 'viewer', publicId: randomBytes(6).toString('hex'), secretHash: 'x' })
    .returning('id');
  aIds.apiKey = apiKey.id;
  const [recurring] = await db()('recurringInvoices')
    .insert({
      tenantId: a.tenant.id,
      customerId: customer.id,
      items: JSON.stringify([{ description: 'A Geheim Abo', quantity: 1, unitPrice: '10.00', taxRate: '20' }]),
      interval: 'monthly',
      startDate: '2026-01-01',
      nextDate: '2026-01-01',
    })
    .returning('id');
  aIds.recurringInvoice = recurring.id;
  const [dunningNotice] = await db()('dunningNotices')
    .insert({
      tenantId: a.tenant.id,
      invoiceId: aIds.invoice,
      level: 1,
      number: 'MA-2026-00001',
      issueDate: '2026-11-01',
      amountDue: '1.00',
      fee: '0.00',
      interest: '0.00',
      totalDue: '1.00',
      content: JSON.stringify({ customer: { name: 'A Geheim KG' } }),
    })
    .returning('id');
  aIds.dunningNotice = dunningNotice.id;
  const purge = await client(server.url, { token: a.admin.token }).post('/api/maintenance/purge-customers', {});
  expect(purge.status, describeResponse(purge)).toBeLessThan(300);
  aIds.maintenanceJob = String(purge.body.jobId ?? purge.body.key ?? purge.body.id);
});
afterAll(async () => {
  await server?.close();
});

describe("tenant isolation: tenant B's admin on tenant A's ids", () => {
  const routes = allRoutes().filter((r) => r.auth !== 'public' && paramNames(r.fullPath).some((n) => n === 'id' || n === 'key'));

  it('the matrix covers every route with an :id (each maps to a resource of A)', () => {
    expect(routes.length).toBeGreaterThan(20);
    const unmapped = routes.filter((r) => !resourceFor(r.fullPath)).map(routeName);
    expect(unmapped, 'add the new route to resourceFor()').toEqual([]);
  });

  for (const route of routes) {
    it(`${routeName(route)} → 404`, async () => {
      const resource = resourceFor(route.fullPath)!;
      const path = fillPath(route.fullPath, { id: aIds[resource], key: aIds[resource] });
      const body = validBody(route);
      if (route.body && body === undefined) throw new Error(`add a valid body for ${routeName(route)} to validBody()`);
      const res = await asB.request(route.method.toUpperCase(), path, body === undefined ? {} : { body });
      expect(res.status, describeResponse(res)).toBe(404);
      expect(envelopeProblem(res)).toBeNull();
      expect(res.body.error.code).toBe('NOT_FOUND');
      expect(JSON.stringify(res.body)).not.toContain('Geheim');
    });
  }

  it("A's resources are unchanged after B's attempts", async () => {
    const asA = client(server.url, { token: a.admin.token });
    const inv = await asA.get(`/api/invoices/${aIds.invoice}`);
    expect(inv.status).toBe(200);
    expect(inv.body.status).toBe('entwurf');
    expect(inv.body.payments ?? []).toHaveLength(0);
    const cust = await asA.get(`/api/customers/${aIds.customer}`);
    expect(cust.body.name).toBe('A Geheim KG');
    expect((await db()('users').where({ id: aIds.user }).first()).active).toBe(true);
    expect(await db()('webauthnCredentials').where({ id: aIds.webauthnCredential })).toHaveLength(1);
    expect((await db()('apiKeys').where({ id: aIds.apiKey }).first()).revokedAt).toBeNull();
  });
});

describe('injection strings in list filters', () => {
  const lists = allRoutes().filter((r) => r.method === 'get' && r.auth !== 'public' && r.query && !paramNames(r.fullPath).length);

  it('every list filter answers 400 or rows of the own tenant only — never 500, never tenant A', async () => {
    expect(lists.length).toBeGreaterThan(3);
    const aMarkers = [a.tenant.id, aIds.customer, aIds.invoice, aIds.supplier, 'A Geheim KG'];
    for (const route of lists) {
      const keys = Object.keys((route.query as { properties?: object }).properties ?? {});
      for (const key of keys) {
        for (const inj of SQL_INJECTIONS) {
          const res = await asB.get(`${fillPath(route.fullPath, {})}?${new URLSearchParams({ [key]: inj })}`);
          const where = `${routeName(route)}?${key}=${inj}: ${describeResponse(res)}`;
          expect([200, 400], where).toContain(res.status);
          if (res.status === 400) expect(envelopeProblem(res), where).toBeNull();
          const text = Buffer.isBuffer(res.body) ? res.body.toString('latin1') : JSON.stringify(res.body);
          for (const m of aMarkers) expect(text, where).not.toContain(m);
        }
      }
    }
  }, 60_000);
});
