import { afterEach, describe, expect, it } from 'vitest';
import { generateSync } from 'otplib';
import { useTestServer } from '../../helpers/server';
import { createTeam, TEST_PASSWORD, type TestUser } from '../../helpers/factories';
import { track } from '../../helpers/audit';
import { db } from '../../../shared/db';
import { advanceClock, resetClock, setClock } from '../../../shared/clock';
import { signAccessToken } from '../../../shared/auth/accessToken';
import { SoftwareAuthenticator } from '../../helpers/webauthnAuthenticator';
import { cookieHeader, expectError, refreshCookie } from './authHelpers';

/**
 * Account self-service of a logged-in user (docs/auth.md): password change, sessions, new
 * recovery codes, and the fresh proof that sensitive second-factor changes need.
 */
const t = useTestServer();
afterEach(() => resetClock());

const login = (email: string, password = TEST_PASSWORD) => t.http.post('/api/auth/login', { email, password });

async function session(user: TestUser) {
  const res = await login(user.email);
  expect(res.status).toBe(200);
  return { token: res.body.token as string, cookie: refreshCookie(res)!.value };
}

/** Pin the clock 5 s into a 30 s TOTP step, so codes never straddle a step boundary. */
function pinClock() {
  const base = (Math.floor(Date.now() / 30_000) * 30 + 5) * 1000;
  setClock(() => base);
  return { at: (o: number) => base / 1000 + o };
}
const code = (secret: string, epochSec: number) => generateSync({ secret, epoch: epochSec });

async function enableTotp(user: TestUser, clock: ReturnType<typeof pinClock>) {
  const setup = await t.http.post('/api/auth/2fa/totp/setup', undefined, { token: user.token });
  expect(setup.status).toBe(200);
  const secret = new URL(setup.body.otpauthUri).searchParams.get('secret')!;
  const enabled = await t.http.post('/api/auth/2fa/totp/enable', { code: code(secret, clock.at(0)) }, { token: user.token });
  expect(enabled.status).toBe(200);
  return { secret, recoveryCodes: enabled.body.recoveryCodes as string[] };
}

const expectStale = (res: { status: number; headers: Headers; body: unknown }) => {
  expectError(res as never, 401, 'UNAUTHORIZED');
  expect(res.headers.get('www-authenticate')).toBe('Bearer error="insufficient_user_authentication", max_age=300');
};

describe('password change', () => {
  it('needs the current password; ends every session and answers with a new one', async () => {
    const { tenant, member } = await createTeam();
    const other = await session(member);
    const change = (body: object) => t.http.post('/api/auth/password/change', body, { token: member.token });

    expectError(await change({ currentPassword: 'not-my-password', newPassword: 'a-brand-new-passphrase' }), 401, 'UNAUTHORIZED');
    expectError(await change({ currentPassword: TEST_PASSWORD, newPassword: TEST_PASSWORD }), 400, 'INVALID_INPUT');
    expectError(await change({ currentPassword: TEST_PASSWORD, newPassword: 'short' }), 400, 'INVALID_INPUT');
    expectError(await change({ currentPassword: TEST_PASSWORD }), 400, 'MISSING_FIELD');
    // Nothing half-written by the refusals.
    expect((await login(member.email)).status).toBe(200);

    const res = await track(
      tenant.id,
      () => [{ action: 'user.password_changed', entityType: 'user', entityId: member.id, actorUserId: member.id }],
      () => change({ currentPassword: TEST_PASSWORD, newPassword: 'a-brand-new-passphrase' }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ token: expect.any(String), user: expect.objectContaining({ id: member.id }) });
    const fresh = refreshCookie(res)!.value;
    expectError(await t.http.post('/api/auth/refresh', undefined, { headers: cookieHeader(other.cookie) }), 401, 'UNAUTHORIZED');
    expect((await t.http.post('/api/auth/refresh', undefined, { headers: cookieHeader(fresh) })).status).toBe(200);
    expectError(await login(member.email), 401, 'UNAUTHORIZED');
    expect((await login(member.email, 'a-brand-new-passphrase')).status).toBe(200);
    // The user is told by e-mail (the job is queued with the change).
    expect(await db()('outbox').where({ jobName: 'send-account-notice' }).whereRaw("payload->>'userId' = ?", [member.id])).toHaveLength(1);
  });

  it('wrong current passwords count toward the lockout', async () => {
    const { member } = await createTeam();
    const statuses = [];
    for (let i = 0; i < 6; i++) {
      statuses.push(
        (
          await t.http.post(
            '/api/auth/password/change',
            { currentPassword: `wrong-${i}-password`, newPassword: 'a-brand-new-passphrase' },
            { token: member.token },
          )
        ).status,
      );
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    expect((await login(member.email)).status).toBe(429);
  });
});

describe('sessions', () => {
  it('lists the own sessions, marks the current one, and ends one: its refresh token stops working', async () => {
    const { member, viewer } = await createTeam();
    const a = await session(member);
    const b = await session(member);
    const list = await t.http.get('/api/auth/sessions', { token: a.token, headers: cookieHeader(a.cookie) });
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(2);
    const current = list.body.find((x: { current: boolean }) => x.current);
    const otherSession = list.body.find((x: { current: boolean }) => !x.current);
    expect(current).toMatchObject({ id: expect.any(String), createdAt: expect.any(String), lastUsedAt: expect.any(String), expiresAt: expect.any(String) });
    expect(JSON.stringify(list.body)).not.toContain(a.cookie);

    // Another user's or an unknown session is 404.
    expectError(await t.http.delete(`/api/auth/sessions/${otherSession.id}`, { token: viewer.token }), 404, 'NOT_FOUND');
    expectError(await t.http.delete('/api/auth/sessions/00000000-0000-4000-8000-000000000000', { token: a.token }), 404, 'NOT_FOUND');

    expect((await t.http.delete(`/api/auth/sessions/${otherSession.id}`, { token: a.token })).status).toBe(204);
    expectError(await t.http.post('/api/auth/refresh', undefined, { headers: cookieHeader(b.cookie) }), 401, 'UNAUTHORIZED');
    const refreshed = await t.http.post('/api/auth/refresh', undefined, { headers: cookieHeader(a.cookie) });
    expect(refreshed.status).toBe(200);
    const after = await t.http.get('/api/auth/sessions', { token: a.token, headers: cookieHeader(refreshCookie(refreshed)!.value) });
    expect(after.body).toEqual([expect.objectContaining({ id: current.id, current: true })]);
    expectError(await t.http.delete(`/api/auth/sessions/${otherSession.id}`, { token: a.token }), 404, 'NOT_FOUND');
  });
});

describe('fresh proof', () => {
  it('enrolling TOTP and removing a passkey need a proof from the last 5 minutes; reauthenticate renews it', async () => {
    const { tenant, member } = await createTeam();
    const s = await session(member);
    await db()('webauthnCredentials').insert({ tenantId: tenant.id, userId: member.id, credentialId: `fresh-${member.id}`, publicKey: Buffer.from('k') });
    const [cred] = await db()('webauthnCredentials').where({ userId: member.id });

    advanceClock(6 * 60_000);
    expectStale(await t.http.post('/api/auth/2fa/totp/setup', undefined, { token: s.token }));
    expectStale(await t.http.delete(`/api/auth/webauthn/credentials/${cred.id}`, { token: s.token }));
    expect(await db()('webauthnCredentials').where({ id: cred.id })).toHaveLength(1);
    // A refreshed token carries no proof at all.
    const refreshed = await t.http.post('/api/auth/refresh', undefined, { headers: cookieHeader(s.cookie) });
    expectStale(await t.http.post('/api/auth/2fa/totp/setup', undefined, { token: refreshed.body.token }));

    expectError(await t.http.post('/api/auth/reauthenticate', { password: 'not-my-password' }, { token: s.token }), 401, 'UNAUTHORIZED');
    expectError(await t.http.post('/api/auth/reauthenticate', { password: TEST_PASSWORD, code: '123456' }, { token: s.token }), 400, 'INVALID_INPUT');
    expectError(await t.http.post('/api/auth/reauthenticate', {}, { token: s.token }), 400, 'INVALID_INPUT');
    const re = await t.http.post('/api/auth/reauthenticate', { password: TEST_PASSWORD }, { token: refreshed.body.token });
    expect(re.status).toBe(200);
    expect(re.body).toEqual({ token: expect.any(String) });
    expect((await t.http.delete(`/api/auth/webauthn/credentials/${cred.id}`, { token: re.body.token })).status).toBe(204);
    expect((await t.http.post('/api/auth/2fa/totp/setup', undefined, { token: re.body.token })).status).toBe(200);
    // Five minutes later the proof is stale again.
    advanceClock(5 * 60_000 + 1000);
    expectStale(await t.http.post('/api/auth/2fa/totp/setup', undefined, { token: re.body.token }));
  });

  it('a token without the claims (issued before this change) has no proof', async () => {
    const { member } = await createTeam();
    const old = signAccessToken({ sub: member.id, tid: member.tenantId, role: member.role });
    expectStale(await t.http.post('/api/auth/2fa/totp/setup', undefined, { token: old }));
    expect((await t.http.get('/api/auth/me', { token: old })).status).toBe(200);
  });
});

describe('recovery codes', () => {
  it('new codes need a fresh second factor; the old codes stop working', async () => {
    const clock = pinClock();
    const { tenant, member } = await createTeam();
    const { secret, recoveryCodes: old } = await enableTotp(member, clock);

    // A password proof is not enough.
    expectStale(await t.http.post('/api/auth/2fa/recovery-codes', undefined, { token: member.token }));
    // Reauthenticating with a TOTP code is.
    const re = await t.http.post('/api/auth/reauthenticate', { code: code(secret, clock.at(30)) }, { token: member.token });
    expect(re.status).toBe(200);
    const res = await track(
      tenant.id,
      () => [{ action: 'user.recovery_codes_regenerated', entityType: 'user', entityId: member.id, actorUserId: member.id }],
      () => t.http.post('/api/auth/2fa/recovery-codes', undefined, { token: re.body.token }),
    );
    expect(res.status).toBe(200);
    expect(res.body.recoveryCodes).toHaveLength(10);
    expect(res.body.recoveryCodes.filter((c: string) => old.includes(c))).toEqual([]);
    expect(res.headers.get('cache-control')).toBe('no-store');

    const challenge = async () => (await login(member.email)).body.challengeToken as string;
    expectError(await t.http.post('/api/auth/2fa/verify', { challengeToken: await challenge(), code: old[0] }), 401, 'UNAUTHORIZED');
    const viaNew = await t.http.post('/api/auth/2fa/verify', { challengeToken: await challenge(), code: res.body.recoveryCodes[0] });
    expect(viaNew.status).toBe(200);
    // That login proved a second factor: its token may issue codes again at once.
    expect((await t.http.post('/api/auth/2fa/recovery-codes', undefined, { token: viaNew.body.token })).status).toBe(200);
  });

  it('a passkey user re-authenticates with the passkey; the options are single use', async () => {
    const { member } = await createTeam();
    const authenticator = new SoftwareAuthenticator({ rpId: 'localhost', origin: 'http://localhost:3000' });
    const reg = await t.http.post('/api/auth/webauthn/register/options', undefined, { token: member.token });
    const stored = await t.http.post('/api/auth/webauthn/register/verify', { response: authenticator.createCredential(reg.body) }, { token: member.token });
    expect(stored.status).toBe(201);

    advanceClock(6 * 60_000);
    expectStale(await t.http.post('/api/auth/2fa/recovery-codes', undefined, { token: member.token }));
    const options = async () => {
      const res = await t.http.post('/api/auth/webauthn/reauthenticate/options', undefined, { token: member.token });
      expect(res.status).toBe(200);
      return res.body;
    };
    // A bad assertion is 401 and spends the challenge: the same options cannot be answered again.
    const o1 = await options();
    const reauth = (passkey: unknown) => t.http.post('/api/auth/reauthenticate', { passkey }, { token: member.token });
    expectError(await reauth(authenticator.getAssertion(o1, { tamper: true })), 401, 'UNAUTHORIZED');
    expectError(await reauth(authenticator.getAssertion(o1)), 401, 'UNAUTHORIZED');

    const ok = await reauth(authenticator.getAssertion(await options()));
    expect(ok.status).toBe(200);
    const codes = await t.http.post('/api/auth/2fa/recovery-codes', undefined, { token: ok.body.token });
    expect(codes.status).toBe(200);
    expect(codes.body.recoveryCodes).toHaveLength(10);
  });

  it('without a second factor there is nothing to recover: 400', async () => {
    const { member } = await createTeam();
    expectError(await t.http.post('/api/auth/2fa/recovery-codes', undefined, { token: member.token }), 400, 'INVALID_INPUT');
    expectError(await t.http.post('/api/auth/webauthn/reauthenticate/options', undefined, { token: member.token }), 400, 'INVALID_INPUT');
  });
});
