import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import jwt from 'jsonwebtoken';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam, createUser, createTenant, TEST_PASSWORD } from '../../helpers/factories';
import { db } from '../../../shared/db';
import { advanceClock, resetClock, setClock } from '../../../shared/clock';
import { signAccessToken } from '../../../shared/auth/accessToken';
import { signChallengeToken } from '../../../shared/auth/challengeToken';
import { lockoutDurationMs } from '../../../shared/auth/lockout';
import { producerRedis } from '../../../shared/redis';
import { config } from '../../../shared/config';
import { purgeUnknownLoginAttemptsJob } from '../../../workers/jobs/maintenance/purgeUnknownLoginAttempts';
import { cookieHeader, expectError, refreshCookie, registration } from './authHelpers';

let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});
afterAll(async () => server.close());
afterEach(() => resetClock());

describe('POST /api/auth/register', () => {
  it('creates tenant + admin in one go and answers like login (201, token, user, refresh cookie)', async () => {
    const body = registration({ country: 'DE', plan: 'pro' });
    const res = await http.post('/api/auth/register', body);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      token: expect.any(String),
      user: { id: expect.any(String), email: body.email, name: 'Anna Admin', role: 'admin', tenantId: expect.any(String) },
    });
    expect(refreshCookie(res)).not.toBeNull();
    const tenant = await db()('tenants').where({ id: res.body.user.tenantId }).first();
    expect(tenant).toMatchObject({ name: 'Muster GmbH', country: 'DE', plan: 'pro' });
    const auditRows = await db()('auditLog').where({ tenantId: tenant.id }).pluck('action');
    expect(auditRows).toEqual(expect.arrayContaining(['tenant.registered', 'user.created', 'user.login']));
    const me = await http.get('/api/auth/me', { token: res.body.token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: res.body.user.id, role: 'admin', active: true, twoFactorEnabled: false });
  });

  it('defaults to AT and the free plan', async () => {
    const res = await http.post('/api/auth/register', registration());
    const tenant = await db()('tenants').where({ id: res.body.user.tenantId }).first();
    expect(tenant).toMatchObject({ country: 'AT', plan: 'free', currency: 'EUR' });
  });

  it('duplicate e-mail (any case) → 409 DUPLICATE, nothing created', async () => {
    const body = registration();
    expect((await http.post('/api/auth/register', body)).status).toBe(201);
    const companyName = `Other GmbH ${Date.now()}`;
    const again = await http.post('/api/auth/register', { ...body, email: body.email.toUpperCase(), companyName });
    expectError(again, 409, 'DUPLICATE');
    expect(await db()('tenants').where({ name: companyName }).first()).toBeUndefined();
  });

  it('validation: short password, bad e-mail, non-EU country, unknown plan, extra property → 400', async () => {
    for (const bad of [
      registration({ password: 'short' }),
      registration({ email: 'not-an-email' }),
      registration({ country: 'US' }),
      registration({ plan: 'enterprise' }),
      registration({ role: 'admin' }),
    ]) {
      const res = await http.post('/api/auth/register', bad);
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.body.error.details.length).toBeGreaterThan(0);
    }
    const missing = await http.post('/api/auth/register', { email: 'x@example.test' });
    expectError(missing, 400, 'MISSING_FIELD');
  });
});

describe('POST /api/auth/login', () => {
  it('answers { token, user } and the refresh cookie with the decided attributes', async () => {
    const { admin } = await createTeam();
    const res = await http.post('/api/auth/login', { email: admin.email.toUpperCase(), password: TEST_PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      token: expect.any(String),
      user: { id: admin.id, email: admin.email, name: 'Test admin', role: 'admin', tenantId: admin.tenantId },
    });
    const cookie = refreshCookie(res)!;
    expect(cookie.value).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(cookie.header).toBe(`refreshToken=${cookie.value}; HttpOnly; Secure; SameSite=Strict; Path=/api/auth; Max-Age=604800`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    // Only the hash is stored.
    const stored = await db()('refreshTokens').where({ userId: admin.id }).first();
    expect(stored.tokenHash).not.toBe(cookie.value);
    expect(stored.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    // The token works on a protected route.
    expect((await http.get('/api/auth/me', { token: res.body.token })).status).toBe(200);
  });

  it('unknown e-mail, wrong password and deactivated user get the same generic 401', async () => {
    const { admin } = await createTeam();
    const tenant = await createTenant();
    const inactive = await createUser(tenant, 'member', { active: false });
    const answers = await Promise.all([
      http.post('/api/auth/login', { email: 'nobody-here@example.test', password: TEST_PASSWORD }),
      http.post('/api/auth/login', { email: admin.email, password: 'wrong-password-123' }),
      http.post('/api/auth/login', { email: inactive.email, password: TEST_PASSWORD }),
    ]);
    for (const res of answers) {
      expectError(res, 401, 'UNAUTHORIZED');
      expect(refreshCookie(res)).toBeNull();
    }
    expect(new Set(answers.map((r) => r.body.error.message)).size).toBe(1);
  });

  it('missing fields → 400', async () => {
    expectError(await http.post('/api/auth/login', { email: 'a@example.test' }), 400, 'MISSING_FIELD');
    expectError(await http.post('/api/auth/login', { email: 'a@example.test', password: 'x', extra: 1 }), 400, 'INVALID_INPUT');
  });
});

describe('lockout (injectable clock)', () => {
  const fail = (email: string) => http.post('/api/auth/login', { email, password: 'definitely-wrong' });
  const ok = (email: string) => http.post('/api/auth/login', { email, password: TEST_PASSWORD });

  it('schedule 5 → 10 → 20 … minutes, capped at 24 h', () => {
    expect([1, 2, 3, 4, 5, 6, 9, 10, 50].map((n) => lockoutDurationMs(n) / 60_000)).toEqual([5, 10, 20, 40, 80, 160, 1280, 1440, 1440]);
  });

  it('unknown and deactivated e-mails are locked out on the same schedule, so 429 does not reveal an account', async () => {
    const t0 = Date.now();
    setClock(() => t0);
    const { tenant, member } = await createTeam();
    const inactive = await createUser(tenant, 'viewer', { active: false });
    const unknown = `nobody-${t0}@example.test`;
    // The answer sequence of each e-mail: five 401s, then 429 with the seconds left.
    const sequence = async (email: string) => {
      const out: string[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await fail(email);
        out.push(`${res.status} ${res.body.error.code} ${res.headers.get('retry-after') ?? '-'} ${res.body.error.message}`);
      }
      return out;
    };
    const real = await sequence(member.email);
    expect(real.slice(0, 5).every((a) => a.startsWith('401 UNAUTHORIZED -'))).toBe(true);
    expect(real[5]).toMatch(/^429 RATE_LIMITED 300 /);
    expect(await sequence(unknown)).toEqual(real);
    expect(await sequence(inactive.email)).toEqual(real);
    // The table keeps no readable address, only a hash of the normalised e-mail; nor does the login rate limit in Redis.
    const rows = await db()('unknownLoginAttempts').select('emailHash');
    expect(rows.map((r) => r.emailHash).join(' ')).not.toContain('@');
    const limiterKeys = await producerRedis().keys(`${config().redisPrefix}:rl:login*`);
    expect(limiterKeys.length).toBeGreaterThan(0);
    expect(limiterKeys.join(' ')).not.toContain('@');
    // The second round doubles for unknown e-mails too.
    advanceClock(300_000);
    for (let i = 0; i < 5; i++) await fail(unknown.toUpperCase());
    expect((await fail(unknown)).headers.get('retry-after')).toBe('600');

    // Rows untouched for longer than the longest lockout are purged by the hourly job.
    advanceClock(25 * 3600_000);
    const { purged } = await purgeUnknownLoginAttemptsJob();
    expect(purged).toBeGreaterThanOrEqual(2);
    expect(
      await db()('unknownLoginAttempts')
        .whereIn(
          'emailHash',
          rows.map((r) => r.emailHash),
        )
        .first(),
    ).toBeUndefined();
  });

  it('5 failures lock for 5 min, then 10, then 20; a success resets everything', async () => {
    const t0 = Date.now();
    setClock(() => t0);
    const { member } = await createTeam();
    const lockRound = async (expectedSec: number) => {
      for (let i = 0; i < 5; i++) expectError(await fail(member.email), 401, 'UNAUTHORIZED');
      // Locked: even the right password gets 429 with the seconds left.
      const locked = await ok(member.email);
      expectError(locked, 429, 'RATE_LIMITED');
      expect(Number(locked.headers.get('retry-after'))).toBe(expectedSec);
      expectError(await fail(member.email), 429, 'RATE_LIMITED');
    };
    await lockRound(300);
    advanceClock(299_000);
    expect(Number((await ok(member.email)).headers.get('retry-after'))).toBe(1);
    advanceClock(1_000);
    await lockRound(600);
    advanceClock(600_000);
    await lockRound(1200);
    let row = await db()('users').where({ id: member.id }).first();
    expect(row.lockoutCount).toBe(3);
    advanceClock(1_200_000);
    const success = await ok(member.email);
    expect(success.status).toBe(200);
    row = await db()('users').where({ id: member.id }).first();
    expect(row).toMatchObject({ failedLoginCount: 0, lockoutCount: 0, lockedUntil: null });
    await lockRound(300);
  });

  it('failures below the threshold are forgotten after a success', async () => {
    const { viewer } = await createTeam();
    for (let i = 0; i < 4; i++) await fail(viewer.email);
    expect((await ok(viewer.email)).status).toBe(200);
    for (let i = 0; i < 4; i++) await fail(viewer.email);
    expect((await ok(viewer.email)).status).toBe(200);
  });

  it('parallel failures are all counted (row lock)', async () => {
    const { manager } = await createTeam();
    await Promise.all(Array.from({ length: 5 }, () => fail(manager.email)));
    expectError(await ok(manager.email), 429, 'RATE_LIMITED');
  });

  it('parallel guesses: only five are checked, the rest are 429 before the password is looked at', async () => {
    const { member } = await createTeam();
    const unknown = `nobody-parallel-${Date.now()}@example.test`;
    for (const email of [member.email, unknown]) {
      // Counted before checked: all twelve used to read "not locked" and were all checked (401).
      const statuses = (await Promise.all(Array.from({ length: 12 }, () => fail(email)))).map((r) => r.status).sort();
      expect(statuses).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
    }
    expectError(await ok(member.email), 429, 'RATE_LIMITED');
  });
});

describe('refresh, rotation, reuse detection, logout', () => {
  const login = async () => {
    const { admin } = await createTeam();
    const res = await http.post('/api/auth/login', { email: admin.email, password: TEST_PASSWORD });
    return { admin, cookie: refreshCookie(res)!.value };
  };

  it('refresh → { token } and a rotated cookie; the new token works', async () => {
    const { admin, cookie } = await login();
    const res = await http.post('/api/auth/refresh', undefined, { headers: cookieHeader(cookie) });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['token']);
    const rotated = refreshCookie(res)!;
    expect(rotated.value).not.toBe(cookie);
    expect(rotated.header).toContain('HttpOnly; Secure; SameSite=Strict; Path=/api/auth; Max-Age=604800');
    const me = await http.get('/api/auth/me', { token: res.body.token });
    expect(me.body.id).toBe(admin.id);
    const again = await http.post('/api/auth/refresh', undefined, { headers: cookieHeader(rotated.value) });
    expect(again.status).toBe(200);
  });

  it('a spent token used again revokes the whole family → 401 for every member of it', async () => {
    const { admin, cookie: first } = await login();
    const second = refreshCookie(await http.post('/api/auth/refresh', undefined, { headers: cookieHeader(first) }))!.value;
    // Replay of the spent first token: reuse.
    const reuse = await http.post('/api/auth/refresh', undefined, { headers: cookieHeader(first) });
    expectError(reuse, 401, 'UNAUTHORIZED');
    // The legitimate successor is now revoked too.
    expectError(await http.post('/api/auth/refresh', undefined, { headers: cookieHeader(second) }), 401, 'UNAUTHORIZED');
    const rows = await db()('refreshTokens').where({ userId: admin.id });
    expect(rows.every((r: { revokedAt: Date | null }) => r.revokedAt !== null)).toBe(true);
  });

  it('missing, unknown or malformed cookie → 401; a token in the body is refused (400: refresh takes no body)', async () => {
    expectError(await http.post('/api/auth/refresh'), 401, 'UNAUTHORIZED');
    expectError(await http.post('/api/auth/refresh', undefined, { headers: cookieHeader('x'.repeat(43)) }), 401, 'UNAUTHORIZED');
    expectError(await http.post('/api/auth/refresh', undefined, { headers: { cookie: 'refreshToken=<script>' } }), 401, 'UNAUTHORIZED');
    const { cookie } = await login();
    const bodyOnly = await http.post('/api/auth/refresh', { refreshToken: cookie });
    expectError(bodyOnly, 400, 'INVALID_INPUT');
    expect(bodyOnly.body.error.details).toEqual([expect.objectContaining({ field: 'refreshToken' })]);
    expect(bodyOnly.body.token).toBeUndefined();
  });

  it('expired after 7 days → 401 (clock moved forward)', async () => {
    const { cookie } = await login();
    advanceClock(7 * 24 * 3600_000 + 1000);
    expectError(await http.post('/api/auth/refresh', undefined, { headers: cookieHeader(cookie) }), 401, 'UNAUTHORIZED');
  });

  it('logout revokes the family and clears the cookie (204)', async () => {
    const { cookie } = await login();
    const second = refreshCookie(await http.post('/api/auth/refresh', undefined, { headers: cookieHeader(cookie) }))!.value;
    const out = await http.post('/api/auth/logout', undefined, { headers: cookieHeader(second) });
    expect(out.status).toBe(204);
    expect(refreshCookie(out)!.header).toBe('refreshToken=; HttpOnly; Secure; SameSite=Strict; Path=/api/auth; Max-Age=0');
    expectError(await http.post('/api/auth/refresh', undefined, { headers: cookieHeader(second) }), 401, 'UNAUTHORIZED');
    // Logout without a cookie is harmless.
    expect((await http.post('/api/auth/logout')).status).toBe(204);
  });

  it('a deactivated user cannot refresh', async () => {
    const { admin, cookie } = await login();
    await db()('users').where({ id: admin.id }).update({ active: false });
    expectError(await http.post('/api/auth/refresh', undefined, { headers: cookieHeader(cookie) }), 401, 'UNAUTHORIZED');
  });

  it('refresh picks up a role change', async () => {
    const { admin, cookie } = await login();
    const tenantAdmin2 = await createUser({ id: admin.tenantId }, 'admin');
    expect(tenantAdmin2).toBeTruthy();
    await db()('users').where({ id: admin.id }).update({ role: 'viewer' });
    const res = await http.post('/api/auth/refresh', undefined, { headers: cookieHeader(cookie) });
    expect((jwt.decode(res.body.token) as jwt.JwtPayload).role).toBe('viewer');
  });
});

describe('forged and misused tokens → 401', () => {
  it('alg none, wrong key, expired, tampered payload, challenge token, garbage', async () => {
    const { admin } = await createTeam();
    const claims = { sub: admin.id, tid: admin.tenantId, role: 'admin' as const };
    const good = signAccessToken(claims);
    const [h, p, sig] = good.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const noneHeader = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const algNone = `${noneHeader}.${p}.`;
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...payload, role: 'admin', tid: '00000000-0000-4000-8000-000000000000' })).toString('base64url')}.${sig}`;
    const wrongKey = signAccessToken(claims, { secret: 'x'.repeat(48) });
    const hs512 = jwt.sign({ ...payload }, 'dev-only-access-secret-change-me-please-0123456789', { algorithm: 'HS512' });
    const challenge = signChallengeToken({ sub: admin.id, tid: admin.tenantId, methods: ['totp'] });

    expect((await http.get('/api/auth/me', { token: good })).status).toBe(200);
    for (const t of [algNone, tampered, wrongKey, hs512, challenge, 'garbage']) {
      expectError(await http.get('/api/auth/me', { token: t }), 401, 'UNAUTHORIZED');
    }
    const expired = signAccessToken(claims, { ttlSec: -5 });
    expectError(await http.get('/api/auth/me', { token: expired }), 401, 'TOKEN_EXPIRED');
    expectError(await http.get('/api/auth/me'), 401, 'UNAUTHORIZED');
  });

  it('an access token is not a challenge token', async () => {
    const { admin } = await createTeam();
    const res = await http.post('/api/auth/2fa/verify', { challengeToken: admin.token, code: '123456' });
    expectError(res, 401, 'UNAUTHORIZED');
  });
});
