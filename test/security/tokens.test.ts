import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import jwt from 'jsonwebtoken';
import { startTestServer } from '../helpers/server';
import { client } from '../helpers/http';
import { createTeam, TEST_PASSWORD } from '../helpers/factories';
import { config } from '../../shared/config';
import { signAccessToken } from '../../shared/auth/accessToken';
import { db } from '../../shared/db';
import { cookieHeader, refreshCookie } from '../api/auth/authHelpers';
import { describeResponse, envelopeProblem } from './routes';
import { bankDelivery, bankEvent, deliver, install, stripeDelivery, stripePaymentEvent } from '../helpers/webhookFactory';

/**
 * Token and transport attacks: forged, expired and tampered access tokens; refresh token reuse;
 * oversized bodies; replayed webhook deliveries.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
let team: Awaited<ReturnType<typeof createTeam>>;

beforeAll(async () => {
  server = await startTestServer();
  team = await createTeam({ plan: 'business' });
});
afterAll(async () => {
  await server?.close();
});

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
const me = (token: string) => client(server.url, { token }).get('/api/auth/me');
const claimsOf = (u: { id: string; tenantId: string }, role = 'admin') => ({ sub: u.id, tid: u.tenantId, role: role as 'admin' });

describe('access tokens', () => {
  it('a valid token works (control)', async () => {
    expect((await me(team.viewer.token)).status).toBe(200);
  });

  it('alg "none", a wrong key, HS512 with the right key, and garbage are 401 UNAUTHORIZED', async () => {
    const now = Math.floor(Date.now() / 1000);
    const payload = {
      tid: team.tenant.id,
      role: 'admin',
      typ: 'access',
      sub: team.viewer.id,
      iss: 'accounting-service',
      aud: 'accounting-api',
      iat: now,
      exp: now + 600,
    };
    const forged = [
      `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}.`,
      `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}`,
      `${b64({ alg: 'NoNe', typ: 'JWT' })}.${b64(payload)}.`,
      signAccessToken(claimsOf(team.admin), { secret: 'another-secret-of-sufficient-length-0123456789' }),
      jwt.sign(payload, config().jwtAccessSecret, { algorithm: 'HS512' }),
      jwt.sign({ ...payload, typ: 'refresh' }, config().jwtAccessSecret, { algorithm: 'HS256' }),
      jwt.sign({ ...payload, aud: 'someone-else' }, config().jwtAccessSecret, { algorithm: 'HS256' }),
      'not.a.jwt',
      'x'.repeat(8000),
    ];
    for (const token of forged) {
      const res = await me(token);
      expect(res.status, `${token.slice(0, 60)}: ${describeResponse(res)}`).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
      expect(envelopeProblem(res)).toBeNull();
    }
    for (const header of ['Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', `Token ${team.admin.token}`, `Bearer ${team.admin.token} extra`]) {
      const res = await client(server.url).get('/api/auth/me', { headers: { authorization: header } });
      expect(res.status, header).toBe(401);
      expect(envelopeProblem(res)).toBeNull();
    }
  });

  it('an expired token is 401 TOKEN_EXPIRED', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = jwt.sign({ tid: team.tenant.id, role: 'admin', typ: 'access', iat: now - 1000, exp: now - 60 }, config().jwtAccessSecret, {
      algorithm: 'HS256',
      subject: team.admin.id,
      issuer: 'accounting-service',
      audience: 'accounting-api',
    });
    const res = await me(expired);
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code: 'TOKEN_EXPIRED', status: 401 });
  });

  it('a token that was accepted (and cached as verified) is TOKEN_EXPIRED from the second its exp is reached', async () => {
    const short = signAccessToken({ sub: team.admin.id, tid: team.tenant.id, role: 'admin' }, { ttlSec: 2 });
    expect((await me(short)).status).toBe(200);
    expect((await me(short)).status).toBe(200); // served from the verified-token cache
    const { exp } = jwt.decode(short) as { exp: number };
    await new Promise((r) => setTimeout(r, exp * 1000 - Date.now() + 50));
    const res = await me(short);
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code: 'TOKEN_EXPIRED', status: 401 });
  });

  it('a tampered payload (role, tenant or user changed, signature kept) is 401', async () => {
    const [h, p, s] = team.viewer.token.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const variants = [
      { ...claims, role: 'admin' },
      { ...claims, tid: team.tenant.id.replace(/.$/, (c: string) => (c === '0' ? '1' : '0')) },
      { ...claims, sub: team.admin.id },
      { ...claims, exp: claims.exp + 3600 },
    ];
    for (const v of variants) {
      const res = await me(`${h}.${b64(v)}.${s}`);
      expect(res.status, JSON.stringify(v)).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    }
    // The viewer cannot become admin by editing the token: an admin-only route stays closed.
    const [h2, p2, s2] = team.viewer.token.split('.');
    const promoted = `${h2}.${b64({ ...JSON.parse(Buffer.from(p2, 'base64url').toString()), role: 'admin' })}.${s2}`;
    expect((await client(server.url, { token: promoted }).put('/api/settings', { vatId: 'ATU99999999' })).status).toBe(401);
  });

  it("a token whose role claim is stale gets the user's current role (demotion takes effect)", async () => {
    // Signed correctly with role admin for a user who is a viewer: the database role wins.
    const res = await client(server.url, { token: signAccessToken(claimsOf(team.viewer, 'admin')) }).put('/api/settings', { vatId: 'ATU99999999' });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });
});

describe('refresh tokens', () => {
  it('reuse of a spent refresh token is 401 and revokes the whole family', async () => {
    const anon = client(server.url);
    const login = await anon.post('/api/auth/login', { email: team.member.email, password: TEST_PASSWORD });
    expect(login.status, describeResponse(login)).toBe(200);
    const first = refreshCookie(login)!.value;

    const r1 = await anon.post('/api/auth/refresh', undefined, { headers: cookieHeader(first) });
    expect(r1.status).toBe(200);
    const second = refreshCookie(r1)!.value;
    expect(second).not.toBe(first);

    // The thief (or the victim) presents the spent token: refused…
    const reuse = await anon.post('/api/auth/refresh', undefined, { headers: cookieHeader(first) });
    expect(reuse.status).toBe(401);
    expect(envelopeProblem(reuse)).toBeNull();
    // …and the live successor is dead too: the family is revoked.
    const after = await anon.post('/api/auth/refresh', undefined, { headers: cookieHeader(second) });
    expect(after.status).toBe(401);
    const family = await db()('refreshTokens').where({ userId: team.member.id });
    expect(family.length).toBeGreaterThanOrEqual(2);
    expect(family.every((t: { revokedAt: unknown }) => t.revokedAt !== null)).toBe(true);
  });

  it('a forged or empty refresh cookie is 401', async () => {
    const anon = client(server.url);
    for (const value of ['', 'x', 'A'.repeat(43), "' OR 1=1 --"]) {
      const res = await anon.post('/api/auth/refresh', undefined, { headers: cookieHeader(encodeURIComponent(value)) });
      expect(res.status, value).toBe(401);
      expect(envelopeProblem(res)).toBeNull();
    }
  });
});

describe('oversized bodies', () => {
  it('JSON bodies over the limit are 413 in the envelope, on every kind of route', async () => {
    const huge = { name: 'x'.repeat(config().bodyLimitBytes + 10) };
    const anon = client(server.url);
    const admin = client(server.url, { token: team.admin.token });
    const results = [
      await admin.post('/api/customers', huge),
      await admin.put('/api/settings', huge),
      await anon.post('/api/auth/login', { email: 'a@b.example', password: huge.name }),
      await anon.request('POST', '/api/payment-import/stripe/some-token', {
        rawBody: Buffer.alloc(config().bodyLimitBytes + 10, 0x7b),
        headers: { 'content-type': 'application/json' },
      }),
    ];
    for (const res of results) {
      expect(res.status, describeResponse(res)).toBe(413);
      expect(envelopeProblem(res)).toBeNull();
    }
  });
});

describe('webhook replay', () => {
  const STRIPE_SECRET = 'whsec_security_replay_0123456789abcdef';
  const BANK_SECRET = 'bank_secret_security_replay_0123456789';

  it('a correctly signed delivery older than the 300 s tolerance is 400; a fresh one is accepted', async () => {
    const { tenant, admin } = await createTeam({ country: 'DE' });
    void tenant;
    const stripe = await install(server.url, admin.token, 'stripe', { webhookSecret: STRIPE_SECRET });
    const event = stripePaymentEvent();
    const stale = stripeDelivery(STRIPE_SECRET, event, Math.floor(Date.now() / 1000) - 301);
    const staleRes = await deliver(server.url, stripe.path, stale.body, stale.headers);
    expect(staleRes.status, describeResponse(staleRes)).toBe(400);
    expect(envelopeProblem(staleRes)).toBeNull();
    const fresh = stripeDelivery(STRIPE_SECRET, event);
    expect((await deliver(server.url, stripe.path, fresh.body, fresh.headers)).status).toBe(200);

    const bank = await install(server.url, admin.token, 'bank', { webhookSecret: BANK_SECRET });
    const ev = bankEvent();
    const staleBank = bankDelivery(BANK_SECRET, ev, Math.floor(Date.now() / 1000) - 301);
    const staleBankRes = await deliver(server.url, bank.path, staleBank.body, staleBank.headers);
    expect(staleBankRes.status, describeResponse(staleBankRes)).toBe(400);
    expect(envelopeProblem(staleBankRes)).toBeNull();
    // Replaying the same fresh delivery again is idempotent (200, duplicate), never a second booking.
    const okBank = bankDelivery(BANK_SECRET, ev);
    expect((await deliver(server.url, bank.path, okBank.body, okBank.headers)).status).toBe(200);
    const again = await deliver(server.url, bank.path, okBank.body, okBank.headers);
    expect(again.status).toBe(200);
  });
});
