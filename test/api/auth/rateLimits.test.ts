import { afterAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam, TEST_PASSWORD } from '../../helpers/factories';
import { expectError, registration } from './authHelpers';

/**
 * The spec's limits with low numbers: each server gets its own Redis prefix, so its counters
 * start at zero and no other test shares them.
 */
const servers: Array<{ close: () => Promise<void> }> = [];
async function serverWith(env: Record<string, string>) {
  const s = await startTestServer({ REDIS_PREFIX: `rl_${randomBytes(6).toString('hex')}`, ...env });
  servers.push(s);
  return client(s.url);
}
afterAll(async () => {
  for (const s of servers) await s.close();
});

const retryAfter = (res: { headers: Headers }) => Number(res.headers.get('retry-after'));

describe('login limit: per e-mail', () => {
  it('the 4th attempt for one e-mail within the window → 429 with Retry-After; other e-mails unaffected', async () => {
    const http = await serverWith({ RATE_LIMIT_LOGIN_POINTS: '3', RATE_LIMIT_LOGIN_WINDOW_SEC: '900' });
    const { admin, viewer } = await createTeam();
    for (let i = 0; i < 3; i++) expect((await http.post('/api/auth/login', { email: admin.email, password: TEST_PASSWORD })).status).toBe(200);
    // Case does not open a new bucket.
    const limited = await http.post('/api/auth/login', { email: admin.email.toUpperCase(), password: TEST_PASSWORD });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(retryAfter(limited)).toBeGreaterThan(850);
    expect(retryAfter(limited)).toBeLessThanOrEqual(900);
    expect((await http.post('/api/auth/login', { email: viewer.email, password: TEST_PASSWORD })).status).toBe(200);
  });

  it('unknown e-mails are limited too (no enumeration by limiter behaviour)', async () => {
    const http = await serverWith({ RATE_LIMIT_LOGIN_POINTS: '2' });
    const email = `ghost-${Date.now()}@example.test`;
    for (let i = 0; i < 2; i++) expectError(await http.post('/api/auth/login', { email, password: 'x' }), 401, 'UNAUTHORIZED');
    expectError(await http.post('/api/auth/login', { email, password: 'x' }), 429, 'RATE_LIMITED');
  });
});

describe('register limit: per IP', () => {
  it('the 3rd registration from one IP → 429 with Retry-After ≤ 60 min', async () => {
    const http = await serverWith({ RATE_LIMIT_REGISTER_POINTS: '2' });
    expect((await http.post('/api/auth/register', registration())).status).toBe(201);
    expect((await http.post('/api/auth/register', registration())).status).toBe(201);
    const limited = await http.post('/api/auth/register', registration());
    expectError(limited, 429, 'RATE_LIMITED');
    expect(retryAfter(limited)).toBeGreaterThan(3500);
    expect(retryAfter(limited)).toBeLessThanOrEqual(3600);
  });

  it('X-Forwarded-For is ignored without TRUST_PROXY', async () => {
    const http = await serverWith({ RATE_LIMIT_REGISTER_POINTS: '1', TRUST_PROXY: 'false' });
    expect((await http.post('/api/auth/register', registration(), { headers: { 'x-forwarded-for': '203.0.113.1' } })).status).toBe(201);
    const spoofed = await http.post('/api/auth/register', registration(), { headers: { 'x-forwarded-for': '203.0.113.2' } });
    expectError(spoofed, 429, 'RATE_LIMITED');
  });

  it('X-Forwarded-For is honoured with TRUST_PROXY=true: the address our proxy appended, not what the client prepended', async () => {
    const http = await serverWith({ RATE_LIMIT_REGISTER_POINTS: '1', TRUST_PROXY: 'true' });
    const via = (chain: string) => http.post('/api/auth/register', registration(), { headers: { 'x-forwarded-for': chain } });
    expect((await via('203.0.113.1')).status).toBe(201);
    expect((await via('203.0.113.2')).status).toBe(201);
    // A client that prepends a made-up address still counts as the address the proxy saw.
    expectError(await via('198.51.100.77, 203.0.113.1'), 429, 'RATE_LIMITED');
    expectError(await via('198.51.100.78, 203.0.113.2'), 429, 'RATE_LIMITED');
  });

  it('with TRUST_PROXY_HOPS=2 the entry added by the outer of two proxies is the client', async () => {
    const http = await serverWith({ RATE_LIMIT_REGISTER_POINTS: '1', TRUST_PROXY: 'true', TRUST_PROXY_HOPS: '2' });
    const via = (chain: string) => http.post('/api/auth/register', registration(), { headers: { 'x-forwarded-for': chain } });
    expect((await via('203.0.113.1, 10.0.0.5')).status).toBe(201);
    expectError(await via('spoofed, 203.0.113.1, 10.0.0.6'), 429, 'RATE_LIMITED');
    expect((await via('203.0.113.9, 10.0.0.5')).status).toBe(201);
  });
});

describe('general API limit: per IP', () => {
  it('the request over the limit → 429 with Retry-After ≤ 60 min, on any /api route', async () => {
    const http = await serverWith({ RATE_LIMIT_API_POINTS: '5' });
    const { viewer } = await createTeam();
    for (let i = 0; i < 5; i++) expect((await http.get('/api/auth/me', { token: viewer.token })).status).toBe(200);
    const limited = await http.get('/api/auth/me', { token: viewer.token });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(retryAfter(limited)).toBeGreaterThan(3500);
    expect(retryAfter(limited)).toBeLessThanOrEqual(3600);
    // Unauthenticated calls count against the same IP budget.
    expectError(await http.post('/api/auth/login', { email: viewer.email, password: TEST_PASSWORD }), 429, 'RATE_LIMITED');
    // Outside /api (liveness) is not limited.
    expect((await http.get('/health')).status).toBe(200);
  });

  it('with TRUST_PROXY=true each forwarded client has its own budget', async () => {
    const http = await serverWith({ RATE_LIMIT_API_POINTS: '2', TRUST_PROXY: 'true' });
    const { viewer } = await createTeam();
    const as = (ip: string) => http.get('/api/auth/me', { token: viewer.token, headers: { 'x-forwarded-for': ip } });
    expect((await as('198.51.100.1')).status).toBe(200);
    expect((await as('198.51.100.1')).status).toBe(200);
    expectError(await as('198.51.100.1'), 429, 'RATE_LIMITED');
    expect((await as('198.51.100.2')).status).toBe(200);
  });
});
