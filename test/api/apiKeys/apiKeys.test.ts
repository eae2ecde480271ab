import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { expectError } from '../auth/authHelpers';
import { db } from '../../../shared/db';
import { logger } from '../../../shared/logger';
import { advanceClock, resetClock } from '../../../shared/clock';
import { forgetUserStates } from '../../../api/middleware/authenticate';
import { API_KEY_PATTERN } from '../../../shared/auth/apiKeys';

/**
 * API keys through the real API (docs/auth.md, "API keys"): a key works with its role in its
 * tenant, stops on the very next request after revocation or expiry, cannot reach people or
 * credentials, is limited per key, and its secret is shown once and never again (list, logs, rows).
 */
type Team = Awaited<ReturnType<typeof createTeam>>;
let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;
let team: Team;
let other: Team;

/** Everything the logger writes while the tests run, as text. */
const logText: string[] = [];
const stream = (logger as unknown as Record<symbol, { write: (s: string) => boolean }>)[pino.symbols.streamSym];
const levelBefore = logger.level;

beforeAll(async () => {
  logger.level = 'debug';
  vi.spyOn(stream, 'write').mockImplementation((chunk: string) => {
    logText.push(String(chunk));
    return true;
  });
  server = await startTestServer({ REDIS_PREFIX: `ak_${randomBytes(6).toString('hex')}` });
  http = client(server.url);
  team = await createTeam();
  other = await createTeam();
});
afterAll(async () => {
  vi.restoreAllMocks();
  logger.level = levelBefore;
  await server?.close();
});
afterEach(() => resetClock());

async function createKey(role: string, extra: Record<string, unknown> = {}, as: { token: string } = team.admin) {
  const res = await http.post('/api/api-keys', { name: `Key ${role}`, role, ...extra }, { token: as.token });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; name: string; role: string; key: string; prefix: string; createdAt: string; expiresAt: string | null };
}

describe('creating and listing', () => {
  it('answers the key once, in the documented format, and stores only its hash', async () => {
    const k = await createKey('member', { name: 'Shop sync' });
    expect(Object.keys(k).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'key', 'name', 'prefix', 'role']);
    expect(k.key).toMatch(API_KEY_PATTERN);
    expect(k.key.startsWith(`${k.prefix}_`)).toBe(true);
    expect(k).toMatchObject({ name: 'Shop sync', role: 'member', expiresAt: null });

    const row = await db()('apiKeys').where({ id: k.id }).first();
    expect(row.tenantId).toBe(team.tenant.id);
    expect(JSON.stringify(row)).not.toContain(k.key.slice(k.prefix.length + 1));
    expect(row.secretHash).toMatch(/^[0-9a-f]{64}$/);

    const list = await http.get('/api/api-keys', { token: team.admin.token });
    expect(list.status).toBe(200);
    const entry = list.body.data.find((e: { id: string }) => e.id === k.id);
    expect(entry).toEqual({
      id: k.id,
      name: 'Shop sync',
      role: 'member',
      prefix: k.prefix,
      createdAt: k.createdAt,
      createdBy: team.admin.id,
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(list.raw.toString()).not.toContain(k.key.slice(k.prefix.length + 1));
    expect(list.raw.toString()).not.toContain(row.secretHash);

    const audit = await db()('auditLog').where({ tenantId: team.tenant.id, entityId: k.id });
    expect(audit.map((a) => a.action)).toEqual(['apiKey.created']);
    expect(audit[0].actorUserId).toBe(team.admin.id);
    expect(JSON.stringify(audit[0].data)).not.toContain(k.key.slice(k.prefix.length + 1));
  });

  it('another tenant does not see the key and cannot revoke it (404)', async () => {
    const k = await createKey('viewer');
    const list = await http.get('/api/api-keys', { token: other.admin.token });
    expect(list.body.data.map((e: { id: string }) => e.id)).not.toContain(k.id);
    expectError(await http.delete(`/api/api-keys/${k.id}`, { token: other.admin.token }), 404, 'NOT_FOUND');
    expect((await http.get('/api/customers', { token: k.key })).status).toBe(200);
  });

  it('bad input: unknown role, no name, expiry in the past, unknown field → 400', async () => {
    const post = (body: unknown) => http.post('/api/api-keys', body, { token: team.admin.token });
    expectError(await post({ name: 'x', role: 'owner' }), 400, 'INVALID_INPUT');
    expectError(await post({ role: 'viewer' }), 400, 'MISSING_FIELD');
    expectError(await post({ name: '   ', role: 'viewer' }), 400, 'INVALID_INPUT');
    expectError(await post({ name: 'x', role: 'viewer', expiresAt: 'tomorrow' }), 400, 'INVALID_INPUT');
    const past = await post({ name: 'x', role: 'viewer', expiresAt: new Date(Date.now() - 60_000).toISOString() });
    expectError(past, 400, 'INVALID_INPUT');
    expect(past.body.error.details).toEqual([{ field: 'expiresAt', message: 'must be in the future' }]);
    expectError(await post({ name: 'x', role: 'viewer', secret: 'mine' }), 400, 'INVALID_INPUT');
  });
});

describe('role ceiling at creation', () => {
  it('a manager cannot create keys at all; an admin demoted since the token was issued cannot mint an admin key', async () => {
    expectError(await http.post('/api/api-keys', { name: 'x', role: 'viewer' }, { token: team.manager.token }), 403, 'FORBIDDEN');
    expectError(await http.get('/api/api-keys', { token: team.member.token }), 403, 'FORBIDDEN');
    const t = await createTeam();
    await db()('users').where({ id: t.admin.id }).update({ role: 'manager' });
    const res = await http.post('/api/api-keys', { name: 'x', role: 'admin' }, { token: t.admin.token });
    expectError(res, 403, 'FORBIDDEN');
    expect(await db()('apiKeys').where({ tenantId: t.tenant.id })).toHaveLength(0);
    forgetUserStates();
  });
});

describe('using a key', () => {
  it('acts with its role in its own tenant, audited as the key', async () => {
    const member = await createKey('member');
    const viewer = await createKey('viewer');
    const created = await http.post('/api/customers', { name: 'Über API GmbH' }, { token: member.key });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const row = await db()('customers').where({ id: created.body.id }).first();
    expect(row.tenantId).toBe(team.tenant.id);
    const audit = await db()('auditLog').where({ tenantId: team.tenant.id, entityId: created.body.id }).first();
    expect(audit).toMatchObject({ actorUserId: null, actorApiKeyId: member.id });

    expectError(await http.post('/api/customers', { name: 'Nope' }, { token: viewer.key }), 403, 'FORBIDDEN');
    expectError(await http.delete(`/api/customers/${created.body.id}`, { token: member.key }), 403, 'FORBIDDEN');
    const list = await http.get('/api/customers', { token: viewer.key });
    expect(list.status).toBe(200);
    expect(list.body.map((c: { id: string }) => c.id)).toContain(created.body.id);

    // Another tenant's customer is not found with this tenant's key.
    const foreign = await http.post('/api/customers', { name: 'Fremd' }, { token: other.admin.token });
    expectError(await http.get(`/api/customers/${foreign.body.id}`, { token: viewer.key }), 404, 'NOT_FOUND');
  });

  it('an invoice created through the single-statement path is audited as the key too', async () => {
    const key = await createKey('member');
    const customer = await http.post('/api/customers', { name: 'Kunde' }, { token: key.key });
    const inv = await http.post(
      '/api/invoices',
      { type: 'rechnung', customerId: customer.body.id, items: [{ description: 'Beratung', quantity: 1, unitPrice: '100.00', taxRate: '20' }] },
      { token: key.key },
    );
    expect(inv.status, JSON.stringify(inv.body)).toBe(201);
    const audit = await db()('auditLog').where({ tenantId: team.tenant.id, entityId: inv.body.id, action: 'invoice.created' }).first();
    expect(audit).toMatchObject({ actorUserId: null, actorApiKeyId: key.id });
  });

  it('records lastUsedAt, at most once a minute', async () => {
    const k = await createKey('viewer');
    expect((await http.get('/api/customers', { token: k.key })).status).toBe(200);
    const first = (await db()('apiKeys').where({ id: k.id }).first()).lastUsedAt as Date;
    expect(first).toBeInstanceOf(Date);
    expect((await http.get('/api/customers', { token: k.key })).status).toBe(200);
    expect(((await db()('apiKeys').where({ id: k.id }).first()).lastUsedAt as Date).getTime()).toBe(first.getTime());
    const list = await http.get('/api/api-keys', { token: team.admin.token });
    expect(list.body.data.find((e: { id: string }) => e.id === k.id).lastUsedAt).toBe(first.toISOString());
  });

  it('cannot reach users, API keys, second factors, passkeys or sessions, whatever its role (403)', async () => {
    const admin = await createKey('admin');
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', '/api/users'],
      ['POST', '/api/users', { email: 'x@example.test', name: 'X', role: 'admin', password: 'a-long-enough-password' }],
      ['GET', `/api/users/${team.member.id}`],
      ['DELETE', `/api/users/${team.member.id}`],
      ['GET', '/api/api-keys'],
      ['POST', '/api/api-keys', { name: 'more', role: 'admin' }],
      ['DELETE', `/api/api-keys/${admin.id}`],
      ['GET', '/api/auth/me'],
      ['POST', '/api/auth/2fa/totp/setup', {}],
      ['POST', '/api/auth/webauthn/register/options', {}],
      ['GET', '/api/auth/webauthn/credentials'],
    ];
    for (const [method, path, body] of attempts) {
      const res = await http.request(method, path, { token: admin.key, ...(body === undefined ? {} : { body }) });
      expectError(res, 403, 'FORBIDDEN');
    }
    expect(await db()('apiKeys').where({ tenantId: team.tenant.id, revokedAt: null, id: admin.id })).toHaveLength(1);
    expect((await db()('users').where({ id: team.member.id }).first()).active).toBe(true);
    // Elsewhere the admin key is an admin.
    expect((await http.get('/api/settings', { token: admin.key })).status).toBe(200);
  });
});

describe('revocation, expiry, wrong keys', () => {
  it('stops working on the very next request after revocation (401), audited once', async () => {
    const k = await createKey('viewer');
    expect((await http.get('/api/customers', { token: k.key })).status).toBe(200);
    expect((await http.delete(`/api/api-keys/${k.id}`, { token: team.admin.token })).status).toBe(204);
    const res = await http.get('/api/customers', { token: k.key });
    expectError(res, 401, 'UNAUTHORIZED');
    expect(res.body.error.message).toMatch(/revoked/);
    expect((await http.delete(`/api/api-keys/${k.id}`, { token: team.admin.token })).status).toBe(204);
    const actions = (await db()('auditLog').where({ tenantId: team.tenant.id, entityId: k.id })).map((a) => a.action).sort();
    expect(actions).toEqual(['apiKey.created', 'apiKey.revoked']);
    const entry = (await http.get('/api/api-keys', { token: team.admin.token })).body.data.find((e: { id: string }) => e.id === k.id);
    expect(entry.revokedAt).toEqual(expect.any(String));
  });

  it('stops working when it expires (401)', async () => {
    const expiresAt = new Date(Date.now() + 60 * 60_000).toISOString();
    const k = await createKey('viewer', { expiresAt });
    expect(k.expiresAt).toBe(expiresAt);
    expect((await http.get('/api/customers', { token: k.key })).status).toBe(200);
    advanceClock(60 * 60_000);
    const res = await http.get('/api/customers', { token: k.key });
    expectError(res, 401, 'UNAUTHORIZED');
    expect(res.body.error.message).toMatch(/expired/);
  });

  it('wrong, forged and malformed keys → 401 Invalid API key, with the same answer', async () => {
    const k = await createKey('admin');
    const secret = k.key.slice(k.prefix.length + 1);
    const flipped = secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A');
    const forged = [
      `${k.prefix}_${flipped}`, // right public id, wrong secret
      `ak_live_abcdefghijkl_${'A'.repeat(43)}`, // well-formed, unknown
      `${k.prefix}_${secret}x`, // too long
      'ak_live_',
      k.prefix,
      k.key.toUpperCase(),
    ];
    for (const token of forged) {
      const res = await http.get('/api/customers', { token });
      expectError(res, 401, 'UNAUTHORIZED');
      expect(res.body.error.message).toBe('Invalid API key');
    }
    // A revoked key's state is told only to whoever holds its secret.
    await http.delete(`/api/api-keys/${k.id}`, { token: team.admin.token });
    expect((await http.get('/api/customers', { token: `${k.prefix}_${flipped}` })).body.error.message).toBe('Invalid API key');
  });
});

describe('rate limit per key', () => {
  it('a key is limited like an IP, wherever its requests come from; other keys are not affected', async () => {
    const s = await startTestServer({ REDIS_PREFIX: `akrl_${randomBytes(6).toString('hex')}`, RATE_LIMIT_API_POINTS: '3', TRUST_PROXY: 'true' });
    try {
      const h = client(s.url);
      const a = await createKey('viewer');
      const b = await createKey('viewer');
      let ip = 10;
      const from = () => ({ 'x-forwarded-for': `203.0.113.${ip++}` });
      for (let i = 0; i < 3; i++) expect((await h.get('/api/customers', { token: a.key, headers: from() })).status).toBe(200);
      const limited = await h.get('/api/customers', { token: a.key, headers: from() });
      expectError(limited, 429, 'RATE_LIMITED');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await h.get('/api/customers', { token: b.key, headers: from() })).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('the secret never reaches a log line', () => {
  it('none of the keys created in this file appears in anything the logger wrote', async () => {
    const k = await createKey('viewer');
    await http.get('/api/customers', { token: k.key });
    await http.get('/api/users', { token: k.key });
    await http.get('/api/customers', { token: `${k.prefix}_${'Z'.repeat(43)}` });
    const keys = await db()('apiKeys').whereIn('tenantId', [team.tenant.id]).select('publicId');
    expect(keys.length).toBeGreaterThan(5);
    const text = logText.join('');
    expect(text).not.toContain(k.key.slice(k.prefix.length + 1));
    expect(text).not.toMatch(/ak_live_[a-z2-7]{12}_[0-9A-Za-z]{43}/);
  });
});
