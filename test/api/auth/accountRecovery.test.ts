import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam, createUser, TEST_PASSWORD, type TestUser } from '../../helpers/factories';
import { startFakeSmtp, type FakeSmtp, type ReceivedMail } from '../../helpers/fakeSmtp';
import { waitUntil } from '../../helpers/waitUntil';
import { track } from '../../helpers/audit';
import { startWorkers, type RunningWorkers } from '../../../workers/worker';
import { reloadConfig } from '../../../shared/config';
import { db } from '../../../shared/db';
import { advanceClock, resetClock } from '../../../shared/clock';
import { cookieHeader, expectError, refreshCookie, uniqueEmail } from './authHelpers';

/**
 * Forgotten password and the admin's recovery tools (docs/auth.md, "Password reset", "Admin
 * recovery"), through the API, the real e-mail job and a real SMTP server.
 */
let smtp: FakeSmtp;
let server: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;
let http: TestClient;

beforeAll(async () => {
  smtp = await startFakeSmtp();
  process.env.SMTP_URL = smtp.url;
  process.env.PUBLIC_APP_URL = 'https://app.buchhaltung.test';
  reloadConfig();
  server = await startTestServer({ RATE_LIMIT_PASSWORD_RESET_EMAIL_POINTS: '5', RATE_LIMIT_PASSWORD_RESET_IP_POINTS: '1000' });
  http = client(server.url);
  // In-process (no sandbox child): the child's start-up takes seconds, and the handlers are the same.
  workers = await startWorkers({ queues: ['email'], schedule: false, sandbox: false });
});
afterAll(async () => {
  await workers?.close();
  await server?.close();
  await smtp?.close();
  delete process.env.PUBLIC_APP_URL;
});
afterEach(() => resetClock());

/** The text of a message as nodemailer writes it (quoted-printable or base64). */
function mailText(m: ReceivedMail): string {
  const split = m.raw.search(/\r?\n\r?\n/);
  const head = m.raw.slice(0, split);
  const body = m.raw.slice(split).trim();
  if (/Content-Transfer-Encoding:\s*base64/i.test(head)) return Buffer.from(body, 'base64').toString('utf8');
  if (/Content-Transfer-Encoding:\s*quoted-printable/i.test(head)) {
    const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body;
}

const mailsTo = (email: string) => smtp.received.filter((m) => m.to.some((t) => t.toLowerCase() === email.toLowerCase()));

async function resetMailFor(email: string, nth = 1): Promise<{ text: string; token: string; raw: string }> {
  const mail = await waitUntil(async () => mailsTo(email).filter((m) => /reset-password/.test(mailText(m)))[nth - 1], `reset e-mail #${nth} to ${email}`);
  const text = mailText(mail);
  const token = /https:\/\/app\.buchhaltung\.test\/reset-password\?token=([A-Za-z0-9_-]+)/.exec(text)?.[1];
  expect(token, text).toBeDefined();
  return { text, token: token!, raw: mail.raw };
}

const login = (email: string, password: string) => http.post('/api/auth/login', { email, password });

async function loggedIn(user: TestUser) {
  const res = await login(user.email, TEST_PASSWORD);
  expect(res.status).toBe(200);
  return { token: res.body.token as string, cookie: refreshCookie(res)!.value };
}

describe('forgotten password', () => {
  it('the whole flow: forgot → e-mail with the link → reset → old sessions end, the new password logs in, the link is spent', async () => {
    const { tenant, member } = await createTeam();
    const before = await loggedIn(member);

    const forgot = await http.post('/api/auth/password/forgot', { email: member.email.toUpperCase() });
    expect(forgot.status).toBe(202);
    expect(forgot.body).toEqual({ message: expect.stringContaining('If the address belongs to an active account') });

    const mail = await resetMailFor(member.email);
    expect(mail.text).toContain('30 Minuten');
    expect(mail.raw).toMatch(/Message-ID: <password-reset-[0-9a-f-]+@/i);
    // Stored hashed only: neither the database nor the job holds the token.
    const rows = await db()('passwordResets').where({ userId: member.id });
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(mail.token);
    const jobs = await db()('outbox').where({ jobName: 'send-password-reset-email' }).whereRaw("payload->>'resetId' = ?", [rows[0].id]);
    expect(JSON.stringify(jobs)).not.toContain(mail.token);

    const newPassword = 'a-brand-new-passphrase';
    await track(
      tenant.id,
      () => [{ action: 'user.password_reset', entityType: 'user', entityId: member.id, actorUserId: member.id }],
      async () => expect((await http.post('/api/auth/password/reset', { token: mail.token, password: newPassword })).status).toBe(204),
    );

    // Every session of the user ended: the refresh cookie from before is dead.
    expectError(await http.post('/api/auth/refresh', undefined, { headers: cookieHeader(before.cookie) }), 401, 'UNAUTHORIZED');
    expectError(await login(member.email, TEST_PASSWORD), 401, 'UNAUTHORIZED');
    expect((await login(member.email, newPassword)).status).toBe(200);
    // Single use.
    expectError(await http.post('/api/auth/password/reset', { token: mail.token, password: 'yet-another-passphrase' }), 401, 'UNAUTHORIZED');
    expect((await login(member.email, newPassword)).status).toBe(200);
    // And the user is told.
    const notice = await waitUntil(
      async () => mailsTo(member.email).find((m) => /password of your account was just changed/.test(mailText(m))),
      'password-changed notice',
    );
    expect(mailText(notice)).toContain('das Passwort Ihres Kontos wurde soeben geändert');
  });

  it('an unknown or deactivated e-mail gets the same answer, and the same writes, but no e-mail', async () => {
    const { tenant } = await createTeam();
    const gone = await createUser(tenant, 'member', { active: false });
    const unknown = uniqueEmail('nobody');
    const known = (await createUser(tenant, 'viewer')).email;
    const queued = async () => Number((await db()('outbox').where({ jobName: 'send-password-reset-email' }).count({ n: '*' }))[0].n);
    const before = await queued();
    const answers = [];
    for (const email of [unknown, gone.email, known]) {
      const res = await http.post('/api/auth/password/forgot', { email });
      answers.push({ status: res.status, body: res.raw.toString('hex'), type: res.headers.get('content-type'), cache: res.headers.get('cache-control') });
    }
    expect(answers[0]).toEqual(answers[2]);
    expect(answers[1]).toEqual(answers[2]);
    // One job each: the request path does the same work whether the address is known or not.
    expect((await queued()) - before).toBe(3);
    await resetMailFor(known);
    // The user-less requests were queued like any other, then dropped by the job without a message.
    await waitUntil(
      async () =>
        (
          await db()('passwordResets')
            .whereNull('userId')
            .where('createdAt', '>', new Date(Date.now() - 60_000))
        ).length === 0,
      'user-less rows dropped',
    );
    expect(mailsTo(unknown)).toHaveLength(0);
    expect(mailsTo(gone.email)).toHaveLength(0);
  });

  it('an expired link is refused, and nothing changes', async () => {
    const { member } = await createTeam();
    await http.post('/api/auth/password/forgot', { email: member.email });
    const { token } = await resetMailFor(member.email);
    advanceClock(31 * 60_000);
    expectError(await http.post('/api/auth/password/reset', { token, password: 'a-brand-new-passphrase' }), 401, 'UNAUTHORIZED');
    resetClock();
    expect((await login(member.email, TEST_PASSWORD)).status).toBe(200);
  });

  it('bad input: a short password or the current one is 400 and leaves the link usable; a made-up token is 401', async () => {
    const { member } = await createTeam();
    await http.post('/api/auth/password/forgot', { email: member.email });
    const { token } = await resetMailFor(member.email);
    expectError(await http.post('/api/auth/password/reset', { token, password: 'short' }), 400, 'INVALID_INPUT');
    expectError(await http.post('/api/auth/password/reset', { token, password: TEST_PASSWORD }), 400, 'INVALID_INPUT');
    expectError(await http.post('/api/auth/password/reset', { token: 'x'.repeat(43), password: 'a-brand-new-passphrase' }), 401, 'UNAUTHORIZED');
    expectError(await http.post('/api/auth/password/reset', { token, password: 'a-brand-new-passphrase', extra: 1 }), 400, 'INVALID_INPUT');
    expect((await login(member.email, TEST_PASSWORD)).status).toBe(200);
    expect((await http.post('/api/auth/password/reset', { token, password: 'a-brand-new-passphrase' })).status).toBe(204);
  });

  it('two parallel resets with one link: exactly one wins', async () => {
    const { member } = await createTeam();
    await http.post('/api/auth/password/forgot', { email: member.email });
    const { token } = await resetMailFor(member.email);
    const results = await Promise.all(
      ['first-new-passphrase', 'second-new-passphrase'].map((password) => http.post('/api/auth/password/reset', { token, password })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([204, 401]);
    const winner = results[0].status === 204 ? 'first-new-passphrase' : 'second-new-passphrase';
    expect((await login(member.email, winner)).status).toBe(200);
  });

  it('a password change spends pending reset links', async () => {
    const { member } = await createTeam();
    await http.post('/api/auth/password/forgot', { email: member.email });
    const { token } = await resetMailFor(member.email);
    const change = await http.post(
      '/api/auth/password/change',
      { currentPassword: TEST_PASSWORD, newPassword: 'changed-by-the-user' },
      { token: member.token },
    );
    expect(change.status).toBe(200);
    expectError(await http.post('/api/auth/password/reset', { token, password: 'a-brand-new-passphrase' }), 401, 'UNAUTHORIZED');
    expect((await login(member.email, 'changed-by-the-user')).status).toBe(200);
  });

  it('is rate-limited per e-mail, the same for a known and an unknown address', async () => {
    const { member } = await createTeam();
    for (const email of [member.email, uniqueEmail('nobody')]) {
      for (let i = 0; i < 5; i++) expect((await http.post('/api/auth/password/forgot', { email })).status).toBe(202);
      const limited = await http.post('/api/auth/password/forgot', { email });
      expectError(limited, 429, 'RATE_LIMITED');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });
  it('is rate-limited per IP across addresses', async () => {
    // A server of its own (own limiter keys) with a small per-IP limit.
    const limited = await startTestServer({ RATE_LIMIT_PASSWORD_RESET_IP_POINTS: '3', REDIS_PREFIX: `${process.env.REDIS_PREFIX}_ip` });
    try {
      const c = client(limited.url);
      for (let i = 0; i < 3; i++) expect((await c.post('/api/auth/password/forgot', { email: uniqueEmail('ip') })).status).toBe(202);
      expectError(await c.post('/api/auth/password/forgot', { email: uniqueEmail('ip') }), 429, 'RATE_LIMITED');
    } finally {
      await limited.close();
    }
  });
});

describe('admin recovery', () => {
  it("an admin resets a member's second factor: TOTP, passkeys and recovery codes go, audited, the member is e-mailed", async () => {
    const { tenant, admin, member } = await createTeam();
    await db()('users')
      .where({ id: member.id })
      .update({ totpEnabled: true, totpSecretEnc: 'v1.x', recoveryCodes: JSON.stringify(['a', 'b']) });
    await db()('webauthnCredentials').insert({ tenantId: tenant.id, userId: member.id, credentialId: 'cred-reset-test', publicKey: Buffer.from('k') });
    expect((await login(member.email, TEST_PASSWORD)).body.twoFactorRequired).toBe(true);

    const res = await track(
      tenant.id,
      () => [{ action: 'user.two_factor_reset', entityType: 'user', entityId: member.id, actorUserId: admin.id }],
      () => http.post(`/api/users/${member.id}/2fa/reset`, undefined, { token: admin.token }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: member.id, twoFactorEnabled: false });
    const row = await db()('users').where({ id: member.id }).first();
    expect(row).toMatchObject({ totpEnabled: false, totpSecretEnc: null, recoveryCodes: [] });
    expect(await db()('webauthnCredentials').where({ userId: member.id })).toHaveLength(0);
    expect((await login(member.email, TEST_PASSWORD)).body.token).toEqual(expect.any(String));
    const mail = await waitUntil(async () => mailsTo(member.email).find((m) => /removed the second factor/.test(mailText(m))), '2FA reset notice');
    expect(mailText(mail)).toContain('den zweiten Faktor Ihres Kontos');
  });

  it('only admins, not on oneself, only in the own tenant', async () => {
    const { admin, manager, member } = await createTeam();
    const other = await createTeam();
    expectError(await http.post(`/api/users/${member.id}/2fa/reset`, undefined, { token: manager.token }), 403, 'FORBIDDEN');
    expectError(await http.post(`/api/users/${member.id}/reactivate`, undefined, { token: manager.token }), 403, 'FORBIDDEN');
    expectError(await http.post(`/api/users/${admin.id}/2fa/reset`, undefined, { token: admin.token }), 403, 'FORBIDDEN');
    expectError(await http.post(`/api/users/${member.id}/2fa/reset`, undefined, { token: other.admin.token }), 404, 'NOT_FOUND');
    expectError(await http.post(`/api/users/${member.id}/reactivate`, undefined, { token: other.admin.token }), 404, 'NOT_FOUND');
  });

  it('an admin reactivates a deactivated user: audited, e-mailed, and they can log in again', async () => {
    const { tenant, admin, member } = await createTeam();
    expect((await http.delete(`/api/users/${member.id}`, { token: admin.token })).status).toBe(204);
    expectError(await login(member.email, TEST_PASSWORD), 401, 'UNAUTHORIZED');

    const res = await track(
      tenant.id,
      () => [{ action: 'user.reactivated', entityType: 'user', entityId: member.id, actorUserId: admin.id }],
      () => http.post(`/api/users/${member.id}/reactivate`, undefined, { token: admin.token }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: member.id, active: true });
    expect((await login(member.email, TEST_PASSWORD)).status).toBe(200);
    const mail = await waitUntil(async () => mailsTo(member.email).find((m) => /reactivated your account/.test(mailText(m))), 'reactivation notice');
    expect(mailText(mail)).toContain('wieder aktiviert');
    // Reactivating an active user changes nothing and writes nothing.
    await track(
      tenant.id,
      () => [],
      async () => expect((await http.post(`/api/users/${member.id}/reactivate`, undefined, { token: admin.token })).status).toBe(200),
    );
  });
});
