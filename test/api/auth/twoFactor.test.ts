import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateSync } from 'otplib';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam, TEST_PASSWORD, type TestUser } from '../../helpers/factories';
import { SoftwareAuthenticator } from '../../helpers/webauthnAuthenticator';
import { db } from '../../../shared/db';
import { resetClock, setClock } from '../../../shared/clock';
import { signChallengeToken } from '../../../shared/auth/challengeToken';
import { expectError, refreshCookie } from './authHelpers';

let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;
const RP = { rpId: 'localhost', origin: 'http://localhost:3000' };

beforeAll(async () => {
  server = await startTestServer({ WEBAUTHN_RP_ID: RP.rpId, WEBAUTHN_ORIGIN: RP.origin });
  http = client(server.url);
});
afterAll(async () => server.close());
afterEach(() => resetClock());

/** Pin the server clock 5 s into a 30 s TOTP step, so codes never straddle a step boundary. */
function pinClock(): { at: (offsetSec: number) => number; set: (offsetSec: number) => void } {
  const base = (Math.floor(Date.now() / 30_000) * 30 + 5) * 1000;
  setClock(() => base);
  return { at: (o) => base / 1000 + o, set: (o) => setClock(() => base + o * 1000) };
}
const code = (secret: string, epochSec: number) => generateSync({ secret, epoch: epochSec });
const login = (u: TestUser) => http.post('/api/auth/login', { email: u.email, password: TEST_PASSWORD });

async function enableTotp(user: TestUser, clock: ReturnType<typeof pinClock>) {
  const setup = await http.post('/api/auth/2fa/totp/setup', undefined, { token: user.token });
  expect(setup.status).toBe(200);
  const secret = new URL(setup.body.otpauthUri).searchParams.get('secret')!;
  const enabled = await http.post('/api/auth/2fa/totp/enable', { code: code(secret, clock.at(0)) }, { token: user.token });
  expect(enabled.status).toBe(200);
  return { secret, recoveryCodes: enabled.body.recoveryCodes as string[] };
}

describe('TOTP', () => {
  it('setup → enable → login asks for a second factor → verify with a code', async () => {
    const clock = pinClock();
    const { member } = await createTeam();
    const setup = await http.post('/api/auth/2fa/totp/setup', undefined, { token: member.token });
    expect(setup.status).toBe(200);
    expect(setup.body.otpauthUri).toMatch(/^otpauth:\/\/totp\/.+\?.*secret=[A-Z2-7]+/);
    expect(setup.body.otpauthUri).toContain(encodeURIComponent(member.email));
    expect(setup.body.qrCodeDataUrl).toMatch(/^data:image\/png;base64,/);
    const secret = new URL(setup.body.otpauthUri).searchParams.get('secret')!;
    let row = await db()('users').where({ id: member.id }).first();
    expect(row.totpEnabled).toBe(false);
    expect(row.totpSecretEnc).toMatch(/^v1\./);
    expect(row.totpSecretEnc).not.toContain(secret);
    // Not enabled yet: login still completes with the password alone.
    expect((await login(member)).body.token).toEqual(expect.any(String));

    expectError(await http.post('/api/auth/2fa/totp/enable', { code: '000000' }, { token: member.token }), 401, 'UNAUTHORIZED');
    expectError(await http.post('/api/auth/2fa/totp/enable', { code: 'abc' }, { token: member.token }), 400, 'INVALID_INPUT');
    const enabled = await http.post('/api/auth/2fa/totp/enable', { code: code(secret, clock.at(0)) }, { token: member.token });
    expect(enabled.status).toBe(200);
    expect(enabled.body.recoveryCodes).toHaveLength(10);
    expect(new Set(enabled.body.recoveryCodes).size).toBe(10);
    row = await db()('users').where({ id: member.id }).first();
    expect(row.totpEnabled).toBe(true);
    expect(JSON.stringify(row.recoveryCodes)).not.toContain(enabled.body.recoveryCodes[0]);
    expectError(await http.post('/api/auth/2fa/totp/setup', undefined, { token: member.token }), 400, 'INVALID_INPUT');

    const first = await login(member);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ twoFactorRequired: true, challengeToken: expect.any(String), methods: ['totp', 'recovery'] });
    expect(first.body).not.toHaveProperty('token');
    expect(refreshCookie(first)).toBeNull();
    // The challenge token is not an access token.
    expectError(await http.get('/api/auth/me', { token: first.body.challengeToken }), 401, 'UNAUTHORIZED');

    expectError(await http.post('/api/auth/2fa/verify', { challengeToken: first.body.challengeToken, code: '123456' }), 401, 'UNAUTHORIZED');
    // The code used for enabling cannot be replayed; the next step (within the ±1 window) works.
    expectError(await http.post('/api/auth/2fa/verify', { challengeToken: first.body.challengeToken, code: code(secret, clock.at(0)) }), 401, 'UNAUTHORIZED');
    const ok = await http.post('/api/auth/2fa/verify', { challengeToken: first.body.challengeToken, code: code(secret, clock.at(30)) });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ token: expect.any(String), user: expect.objectContaining({ id: member.id, role: 'member' }) });
    expect(refreshCookie(ok)!.header).toContain('HttpOnly; Secure; SameSite=Strict; Path=/api/auth');
    expect((await http.get('/api/auth/me', { token: ok.body.token })).body.twoFactorEnabled).toBe(true);
    // Replay of the same code → 401.
    const again = await login(member);
    expectError(await http.post('/api/auth/2fa/verify', { challengeToken: again.body.challengeToken, code: code(secret, clock.at(30)) }), 401, 'UNAUTHORIZED');
  });

  it('±1 step window: the previous step is accepted, two steps back is not', async () => {
    const clock = pinClock();
    const { viewer } = await createTeam();
    const { secret } = await enableTotp(viewer, clock);
    clock.set(120);
    const c1 = (await login(viewer)).body.challengeToken;
    expectError(await http.post('/api/auth/2fa/verify', { challengeToken: c1, code: code(secret, clock.at(60)) }), 401, 'UNAUTHORIZED');
    expect((await http.post('/api/auth/2fa/verify', { challengeToken: c1, code: code(secret, clock.at(90)) })).status).toBe(200);
  });

  it('recovery codes work once each', async () => {
    const clock = pinClock();
    const { manager } = await createTeam();
    const { recoveryCodes } = await enableTotp(manager, clock);
    const c = (await login(manager)).body.challengeToken;
    const ok = await http.post('/api/auth/2fa/verify', { challengeToken: c, code: recoveryCodes[3].toUpperCase() });
    expect(ok.status).toBe(200);
    const c2 = (await login(manager)).body.challengeToken;
    expectError(await http.post('/api/auth/2fa/verify', { challengeToken: c2, code: recoveryCodes[3] }), 401, 'UNAUTHORIZED');
    expect((await http.post('/api/auth/2fa/verify', { challengeToken: c2, code: recoveryCodes[4] })).status).toBe(200);
    const row = await db()('users').where({ id: manager.id }).first();
    expect(row.recoveryCodes).toHaveLength(8);
  });

  it('verify failures count toward the lockout; expired or forged challenges → 401', async () => {
    const clock = pinClock();
    const { admin } = await createTeam();
    const { secret } = await enableTotp(admin, clock);
    const c = (await login(admin)).body.challengeToken;
    for (let i = 0; i < 5; i++) expectError(await http.post('/api/auth/2fa/verify', { challengeToken: c, code: '000000' }), 401, 'UNAUTHORIZED');
    const locked = await http.post('/api/auth/2fa/verify', { challengeToken: c, code: code(secret, clock.at(30)) });
    expectError(locked, 429, 'RATE_LIMITED');
    expect(Number(locked.headers.get('retry-after'))).toBe(300);
    expectError(await login(admin), 429, 'RATE_LIMITED');

    const expired = signChallengeToken({ sub: admin.id, tid: admin.tenantId, methods: ['totp'] }, { ttlSec: -1 });
    expectError(await http.post('/api/auth/2fa/verify', { challengeToken: expired, code: '123456' }), 401, 'UNAUTHORIZED');
    const forged = signChallengeToken({ sub: admin.id, tid: admin.tenantId, methods: ['totp'] }, { secret: 'y'.repeat(40) });
    expectError(await http.post('/api/auth/2fa/verify', { challengeToken: forged, code: '123456' }), 401, 'UNAUTHORIZED');
  });

  it('parallel wrong codes: only five are checked; the right password before a second factor is not a failure', async () => {
    const clock = pinClock();
    const { member } = await createTeam();
    const { secret } = await enableTotp(member, clock);
    // The right password, again and again, never locks: each attempt gives its count back.
    for (let i = 0; i < 6; i++) expect((await login(member)).body.twoFactorRequired).toBe(true);
    // Four wrong passwords, then the right one (its own count would have locked; it is taken back),
    // then one wrong code: the fifth failure locks.
    for (let i = 0; i < 4; i++) expectError(await http.post('/api/auth/login', { email: member.email, password: 'wrong-password' }), 401, 'UNAUTHORIZED');
    const c = (await login(member)).body.challengeToken;
    expect(c).toEqual(expect.any(String));
    expectError(await http.post('/api/auth/2fa/verify', { challengeToken: c, code: '000000' }), 401, 'UNAUTHORIZED');
    expectError(await http.post('/api/auth/2fa/verify', { challengeToken: c, code: code(secret, clock.at(30)) }), 429, 'RATE_LIMITED');

    clock.set(301);
    const c2 = (await login(member)).body.challengeToken;
    const statuses = (await Promise.all(Array.from({ length: 12 }, () => http.post('/api/auth/2fa/verify', { challengeToken: c2, code: '000000' }))))
      .map((r) => r.status)
      .sort();
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
  });

  it('disable needs a valid code; afterwards login is password-only again', async () => {
    const clock = pinClock();
    const { member } = await createTeam();
    const { secret } = await enableTotp(member, clock);
    clock.set(60);
    expectError(await http.post('/api/auth/2fa/totp/disable', { code: '111111' }, { token: member.token }), 401, 'UNAUTHORIZED');
    expect((await http.post('/api/auth/2fa/totp/disable', { code: code(secret, clock.at(60)) }, { token: member.token })).status).toBe(204);
    const row = await db()('users').where({ id: member.id }).first();
    expect(row).toMatchObject({ totpEnabled: false, totpSecretEnc: null, recoveryCodes: [] });
    expect((await login(member)).body.token).toEqual(expect.any(String));
    expectError(await http.post('/api/auth/2fa/totp/disable', { code: '111111' }, { token: member.token }), 400, 'INVALID_INPUT');
  });

  it('TOTP routes need authentication', async () => {
    expectError(await http.post('/api/auth/2fa/totp/setup'), 401, 'UNAUTHORIZED');
    expectError(await http.post('/api/auth/2fa/totp/enable', { code: '123456' }), 401, 'UNAUTHORIZED');
  });
});

describe('WebAuthn / passkeys (software authenticator)', () => {
  async function registerPasskey(user: TestUser) {
    const authenticator = new SoftwareAuthenticator(RP);
    const options = await http.post('/api/auth/webauthn/register/options', undefined, { token: user.token });
    expect(options.status).toBe(200);
    expect(options.body).toMatchObject({ rp: { id: 'localhost' }, user: { name: user.email }, challenge: expect.any(String) });
    const res = await http.post('/api/auth/webauthn/register/verify', { response: authenticator.createCredential(options.body) }, { token: user.token });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ credentialId: authenticator.id });
    return authenticator;
  }

  async function passkeyOptions(user: TestUser) {
    const first = await login(user);
    const options = await http.post('/api/auth/webauthn/login/options', { challengeToken: first.body.challengeToken });
    expect(options.status).toBe(200);
    return { challengeToken: first.body.challengeToken as string, options: options.body, methods: first.body.methods };
  }

  it('register a passkey, then log in with it (second factor after the password)', async () => {
    const { member } = await createTeam();
    const authenticator = await registerPasskey(member);
    const list = await http.get('/api/auth/webauthn/credentials', { token: member.token });
    expect(list.body).toHaveLength(1);

    const { challengeToken, options, methods } = await passkeyOptions(member);
    expect(methods).toEqual(['webauthn']);
    expect(options.allowCredentials).toEqual([expect.objectContaining({ id: authenticator.id })]);
    const assertion = authenticator.getAssertion(options);
    const res = await http.post('/api/auth/webauthn/login/verify', { challengeToken, response: assertion });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ token: expect.any(String), user: expect.objectContaining({ id: member.id }) });
    expect(refreshCookie(res)).not.toBeNull();
    const cred = await db()('webauthnCredentials').where({ userId: member.id }).first();
    expect(Number(cred.counter)).toBe(1);

    // The challenge is single-use: replaying the same assertion fails.
    expectError(await http.post('/api/auth/webauthn/login/verify', { challengeToken, response: assertion }), 401, 'UNAUTHORIZED');
  });

  it('rejects a counter that does not grow (cloned authenticator), a wrong origin and a bad signature', async () => {
    const { viewer } = await createTeam();
    const authenticator = await registerPasskey(viewer);
    let o = await passkeyOptions(viewer);
    expect(
      (
        await http.post('/api/auth/webauthn/login/verify', {
          challengeToken: o.challengeToken,
          response: authenticator.getAssertion(o.options, { counter: 5 }),
        })
      ).status,
    ).toBe(200);
    o = await passkeyOptions(viewer);
    expectError(
      await http.post('/api/auth/webauthn/login/verify', { challengeToken: o.challengeToken, response: authenticator.getAssertion(o.options, { counter: 5 }) }),
      401,
      'UNAUTHORIZED',
    );
    o = await passkeyOptions(viewer);
    expectError(
      await http.post('/api/auth/webauthn/login/verify', {
        challengeToken: o.challengeToken,
        response: authenticator.getAssertion(o.options, { origin: 'https://evil.example' }),
      }),
      401,
      'UNAUTHORIZED',
    );
    o = await passkeyOptions(viewer);
    expectError(
      await http.post('/api/auth/webauthn/login/verify', {
        challengeToken: o.challengeToken,
        response: authenticator.getAssertion(o.options, { tamper: true }),
      }),
      401,
      'UNAUTHORIZED',
    );
    // Another authenticator (not registered for this user) → 401.
    o = await passkeyOptions(viewer);
    const stranger = new SoftwareAuthenticator(RP);
    expectError(
      await http.post('/api/auth/webauthn/login/verify', { challengeToken: o.challengeToken, response: stranger.getAssertion(o.options) }),
      401,
      'UNAUTHORIZED',
    );
    const row = await db()('users').where({ id: viewer.id }).first();
    expect(row.failedLoginCount).toBe(4);
  });

  it('registration is bound to its challenge; options need a valid challengeToken', async () => {
    const { admin } = await createTeam();
    const authenticator = new SoftwareAuthenticator(RP);
    // No pending options.
    expectError(
      await http.post('/api/auth/webauthn/register/verify', { response: authenticator.createCredential({ challenge: 'AAAA' }) }, { token: admin.token }),
      400,
      'INVALID_INPUT',
    );
    const options = await http.post('/api/auth/webauthn/register/options', undefined, { token: admin.token });
    expectError(
      await http.post(
        '/api/auth/webauthn/register/verify',
        { response: authenticator.createCredential({ ...options.body, challenge: 'wrong' }) },
        { token: admin.token },
      ),
      400,
      'INVALID_INPUT',
    );
    expectError(await http.post('/api/auth/webauthn/login/options', { challengeToken: admin.token }), 401, 'UNAUTHORIZED');
    expectError(await http.post('/api/auth/webauthn/register/options'), 401, 'UNAUTHORIZED');
    expectError(await http.post('/api/auth/webauthn/register/verify', { response: {} }, { token: admin.token }), 400, 'MISSING_FIELD');
  });

  it('with TOTP and a passkey, login offers both; a passkey can be removed', async () => {
    const clock = pinClock();
    const { manager } = await createTeam();
    await enableTotp(manager, clock);
    const authenticator = await registerPasskey(manager);
    const first = await login(manager);
    expect(first.body.methods).toEqual(['totp', 'webauthn', 'recovery']);
    const [cred] = (await http.get('/api/auth/webauthn/credentials', { token: manager.token })).body;
    const other = await createTeam();
    expectError(await http.delete(`/api/auth/webauthn/credentials/${cred.id}`, { token: other.admin.token }), 404, 'NOT_FOUND');
    expect((await http.delete(`/api/auth/webauthn/credentials/${cred.id}`, { token: manager.token })).status).toBe(204);
    expect((await login(manager)).body.methods).toEqual(['totp', 'recovery']);
    expect(authenticator.id).toBe(cred.credentialId);
  });

  it('recovery codes go with the last second factor: they do not come back with a later passkey', async () => {
    const clock = pinClock();
    const { member } = await createTeam();
    const { secret, recoveryCodes } = await enableTotp(member, clock);
    await registerPasskey(member);
    clock.set(60);
    expect((await http.post('/api/auth/2fa/totp/disable', { code: code(secret, clock.at(60)) }, { token: member.token })).status).toBe(204);
    const [cred] = (await http.get('/api/auth/webauthn/credentials', { token: member.token })).body;
    expect((await http.delete(`/api/auth/webauthn/credentials/${cred.id}`, { token: member.token })).status).toBe(204);
    expect((await db()('users').where({ id: member.id }).first()).recoveryCodes).toEqual([]);
    await registerPasskey(member);
    const { body } = await login(member);
    expect(body.methods).toEqual(['webauthn']);
    expectError(await http.post('/api/auth/2fa/verify', { challengeToken: body.challengeToken, code: recoveryCodes[0] }), 401, 'UNAUTHORIZED');
  });

  it('wrong codes to disable TOTP count toward the lockout: only five are checked', async () => {
    const clock = pinClock();
    const { member } = await createTeam();
    const { secret } = await enableTotp(member, clock);
    const statuses = (await Promise.all(Array.from({ length: 12 }, () => http.post('/api/auth/2fa/totp/disable', { code: '000000' }, { token: member.token }))))
      .map((r) => r.status)
      .sort();
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
    // Locked: the right code too is 429 until the lockout ends; then it disables.
    expectError(await http.post('/api/auth/2fa/totp/disable', { code: code(secret, clock.at(30)) }, { token: member.token }), 429, 'RATE_LIMITED');
    clock.set(301);
    expect((await http.post('/api/auth/2fa/totp/disable', { code: code(secret, clock.at(301)) }, { token: member.token })).status).toBe(204);
  });

  it("passkey transports are kept only when known (anything else broke the user's own login options)", async () => {
    const { member } = await createTeam();
    const authenticator = new SoftwareAuthenticator(RP);
    const options = await http.post('/api/auth/webauthn/register/options', undefined, { token: member.token });
    const credential = authenticator.createCredential(options.body) as { response: Record<string, unknown> };
    credential.response.transports = ['usb', 'evil', { x: 1 }, 'internal'];
    expect((await http.post('/api/auth/webauthn/register/verify', { response: credential }, { token: member.token })).status).toBe(201);
    const row = await db()('webauthnCredentials').where({ userId: member.id }).first();
    expect(row.transports).toEqual(['usb', 'internal']);
  });
});
