import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../../helpers/server';
import { createTeam, TEST_PASSWORD, type TestUser } from '../../helpers/factories';
import { SoftwareAuthenticator } from '../../helpers/webauthnAuthenticator';
import { reloadConfig } from '../../../shared/config';
import { expectError } from './authHelpers';

/**
 * One passkey for every regional address (docs/auth.md, "One passkey for every address"): the
 * RP ID's /.well-known/webauthn lists the related origins, and registration and login accept a
 * ceremony from any of them and from no other.
 */
const RP = { rpId: 'localhost', origin: 'http://localhost:3000' };
const AT = RP.origin;
const DE = 'https://buchhaltung.de';
const EU = 'https://buchhaltung.eu';
const ENV = { WEBAUTHN_RP_ID: RP.rpId, WEBAUTHN_ORIGIN: RP.origin, WEBAUTHN_RELATED_ORIGINS: `${DE}, ${EU}` };
// The passkey commands read the process configuration (shared/config.ts), not only the server's.
beforeAll(() => {
  Object.assign(process.env, ENV);
  reloadConfig();
});
afterAll(() => {
  delete process.env.WEBAUTHN_RELATED_ORIGINS;
  reloadConfig();
});
const t = useTestServer(ENV);

async function register(user: TestUser, origin: string) {
  const authenticator = new SoftwareAuthenticator(RP);
  const options = await t.http.post('/api/auth/webauthn/register/options', undefined, { token: user.token });
  expect(options.status).toBe(200);
  expect(options.body.rp.id).toBe(RP.rpId);
  const res = await t.http.post(
    '/api/auth/webauthn/register/verify',
    { response: authenticator.createCredential(options.body, { origin }) },
    { token: user.token },
  );
  return { authenticator, res };
}

async function loginWithPasskey(user: TestUser, authenticator: SoftwareAuthenticator, origin: string) {
  const first = await t.http.post('/api/auth/login', { email: user.email, password: TEST_PASSWORD });
  expect(first.body.twoFactorRequired).toBe(true);
  const options = await t.http.post('/api/auth/webauthn/login/options', { challengeToken: first.body.challengeToken });
  expect(options.status).toBe(200);
  return t.http.post('/api/auth/webauthn/login/verify', {
    challengeToken: first.body.challengeToken,
    response: authenticator.getAssertion(options.body, { origin }),
  });
}

describe('WebAuthn related origins', () => {
  it('GET /.well-known/webauthn lists the RP origin and the related origins, publicly', async () => {
    const res = await t.http.get('/.well-known/webauthn');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({ origins: [AT, DE, EU] });
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
  });

  it('a passkey registered on one listed origin logs in on another; an unlisted origin is refused', async () => {
    const { member } = await createTeam();
    const { authenticator, res } = await register(member, DE);
    expect(res.status).toBe(201);
    expect((await loginWithPasskey(member, authenticator, EU)).status).toBe(200);
    expect((await loginWithPasskey(member, authenticator, AT)).status).toBe(200);
    expectError(await loginWithPasskey(member, authenticator, 'https://buchhaltung-phish.example'), 401, 'UNAUTHORIZED');
    // A listed host under another scheme or port is another origin.
    expectError(await loginWithPasskey(member, authenticator, 'http://buchhaltung.de'), 401, 'UNAUTHORIZED');
    expectError(await loginWithPasskey(member, authenticator, 'https://buchhaltung.de:8443'), 401, 'UNAUTHORIZED');
  });

  it('registration from an unlisted origin is refused and stores nothing', async () => {
    const { member } = await createTeam();
    const { res } = await register(member, 'https://buchhaltung-phish.example');
    expectError(res, 400, 'INVALID_INPUT');
    expect((await t.http.get('/api/auth/webauthn/credentials', { token: member.token })).body).toEqual([]);
  });
});
