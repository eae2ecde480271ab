import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Context } from 'koa';
import { createRouter, type AppContext } from '../../routing';
import { consume, limitBy } from '../../middleware/rateLimit';
import { clientIp } from '../../middleware/clientIp';
import { errorEnvelope } from '../../schemas/common';
import { unauthorized } from '../../../shared/errors';
import { db } from '../../../shared/db';
import { runInTransaction } from '../../../shared/outbox';
import { invalidRefreshToken } from '../../../shared/auth/refreshTokens';
import { emailHash } from '../../../shared/auth/lockout';
import { checkPassword, claimPasswordAttempt, finishPasswordLogin, logout, refreshSession, type Session } from '../../../shared/commands/login';
import { registerTenant } from '../../../shared/commands/registerTenant';
import { getUser } from '../../../shared/queries/users';
import { listPasskeys, listSessions, refreshFamilyOf } from '../../../shared/queries/auth';
import {
  claimCodeAttempt,
  claimTotpDisableAttempt,
  disableTotp,
  enableTotp,
  regenerateRecoveryCodes,
  setupTotp,
  verifySecondFactor,
} from '../../../shared/commands/twoFactor';
import {
  assertNewPassword,
  changePassword,
  checkPasswordReset,
  claimProofAttempt,
  reauthenticate,
  requestPasswordReset,
  resetPassword,
  revokeSession,
} from '../../../shared/commands/account';
import { hashPassword, verifyPassword } from '../../../shared/auth/passwords';
import { sha256Hex } from '../../../shared/crypto/secretBox';
import { now } from '../../../shared/clock';
import {
  authenticationOptions,
  claimPasskeyAttempt,
  deletePasskey,
  reauthenticationOptions,
  registrationOptions,
  takeRegistrationChallenge,
  verifyAuthentication,
  verifyRegistration,
} from '../../../shared/commands/webauthn';
import { clearRefreshCookie, readRefreshCookie, setRefreshCookie } from './cookie';
import * as s from './schemas';

/**
 * Authentication: register, login (+ second factor), refresh, logout, me, TOTP and passkeys.
 * Handlers only translate HTTP ↔ commands; the rules live in shared/commands and shared/auth.
 * A login attempt is claimed in a transaction of its own that commits before the password or
 * code is checked, so a failure stays counted when the answer is 401 (docs/auth.md).
 */
export const { router: authRouter, add } = createRouter('/api/auth', 'Authentication');

const err = (description: string) => ({ description, schema: errorEnvelope });

/** Answer a finished login: access token in the body, refresh token in the cookie. */
function sendSession(ctx: AppContext, session: Session, status = 200): void {
  setRefreshCookie(ctx, session.refresh.token, ctx.config.refreshTtlSec);
  ctx.set('Cache-Control', 'no-store');
  ctx.status = status;
  ctx.body = { token: session.token, user: session.user };
}

const noStore = async (ctx: Context, next: () => Promise<unknown>) => {
  ctx.set('Cache-Control', 'no-store');
  await next();
};

add<s.RegisterBody>({
  method: 'post',
  path: '/register',
  auth: 'public',
  summary: 'Create a tenant and its first admin user; answers like login',
  description: 'Rate limit: 5 per 60 minutes per IP. The e-mail must not be in use (case-insensitive).',
  body: s.register,
  before: [limitBy('register', clientIp)],
  responses: {
    201: { description: 'Registered and logged in; Set-Cookie: refreshToken', schema: s.session },
    400: err('Invalid input'),
    409: err('E-mail already registered (DUPLICATE)'),
    429: err('Rate limit (Retry-After)'),
  },
  handler: async (ctx) => {
    const requestId = ctx.state.requestId;
    sendSession(ctx, await runInTransaction((trx) => registerTenant({ trx, requestId }, ctx.input.body)), 201);
  },
});

add<{ email: string; password: string }>({
  method: 'post',
  path: '/login',
  auth: 'public',
  summary: 'Log in with e-mail and password',
  description:
    'Without a second factor: { token, user } and the refresh cookie. With TOTP or a passkey: { twoFactorRequired, challengeToken, methods }; ' +
    'finish with /2fa/verify or /webauthn/login/*. Rate limit: 10 per 15 minutes per e-mail. Five failures lock the account ' +
    '(5, 10, 20 … minutes, at most 24 h): 429 with Retry-After.',
  body: s.login,
  responses: {
    200: { description: 'Logged in, or a second factor is required', schema: s.loginResult },
    400: err('Invalid input'),
    401: err('Invalid e-mail or password'),
    429: err('Rate limit or account locked (Retry-After)'),
  },
  handler: async (ctx) => {
    const { email, password } = ctx.input.body;
    const requestId = ctx.state.requestId;
    await consume(ctx.limiters.login, emailHash(email));
    // Own transaction, committed before the check: a wrong password must stay counted.
    const claimed = await runInTransaction((trx) => claimPasswordAttempt({ trx, requestId }, email));
    const user = await checkPassword(claimed, password);
    const result = await runInTransaction((trx) => finishPasswordLogin({ trx, requestId }, user, claimed.attempt));
    if ('twoFactorRequired' in result) {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = result;
      return;
    }
    sendSession(ctx, result);
  },
});

add({
  method: 'post',
  path: '/refresh',
  auth: 'public',
  summary: 'New access token from the refresh cookie (no body); the cookie is rotated',
  description: 'A refresh token presented a second time revokes its whole family (reuse detection).',
  responses: {
    200: { description: 'New access token; Set-Cookie: refreshToken (rotated)', schema: s.tokenOnly },
    401: err('Missing, expired, revoked or reused refresh token: log in again'),
  },
  handler: async (ctx) => {
    const requestId = ctx.state.requestId;
    let session: Awaited<ReturnType<typeof refreshSession>>;
    try {
      // null rather than a throw, so a reused token's family revocation commits before the 401.
      session = await runInTransaction((trx) => refreshSession({ trx, requestId }, readRefreshCookie(ctx)));
    } catch (e) {
      clearRefreshCookie(ctx);
      throw e;
    }
    if (!session) {
      clearRefreshCookie(ctx);
      throw invalidRefreshToken();
    }
    setRefreshCookie(ctx, session.rotated.refresh.token, ctx.config.refreshTtlSec);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { token: session.token };
  },
});

add({
  method: 'post',
  path: '/logout',
  auth: 'public',
  summary: 'Revoke the refresh token family of the cookie and clear the cookie',
  responses: { 204: { description: 'Logged out' } },
  handler: async (ctx) => {
    const requestId = ctx.state.requestId;
    await runInTransaction((trx) => logout({ trx, requestId }, readRefreshCookie(ctx)));
    clearRefreshCookie(ctx);
    ctx.status = 204;
  },
});

add({
  method: 'get',
  path: '/me',
  auth: 'viewer',
  summary: 'The current user',
  responses: { 200: { description: 'Current user', schema: s.me }, 401: err('Not authenticated') },
  handler: async (ctx) => {
    const { tenantId, userId } = ctx.state.actor;
    const user = await getUser(db(), tenantId, userId!).catch(() => null);
    if (!user?.active) throw unauthorized('The user no longer exists or is deactivated');
    ctx.body = user;
  },
});

// ── TOTP ──────────────────────────────────────────────────────────────────────────────────────
add({
  method: 'post',
  path: '/2fa/totp/setup',
  auth: 'viewer',
  summary: 'Start TOTP setup: a new secret as otpauth URI and QR code (not active until enabled)',
  description: 'Needs a fresh proof (a login or POST /api/auth/reauthenticate within the last 5 minutes), else 401.',
  before: [noStore],
  responses: {
    200: { description: 'Scan this', schema: s.totpSetup },
    400: err('TOTP already enabled'),
    401: err('No fresh proof (WWW-Authenticate: insufficient_user_authentication): re-authenticate and retry'),
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => setupTotp({ trx, actor }));
  },
});

add<{ code: string }>({
  method: 'post',
  path: '/2fa/totp/enable',
  auth: 'viewer',
  summary: 'Enable TOTP with a current code; returns 10 one-time recovery codes (shown once)',
  body: s.code,
  before: [noStore],
  responses: {
    200: { description: 'Enabled', schema: s.recoveryCodes },
    400: err('No setup pending, or already enabled'),
    401: err('Wrong or expired code'),
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => enableTotp({ trx, actor }, ctx.input.body.code));
  },
});

add<{ code: string }>({
  method: 'post',
  path: '/2fa/totp/disable',
  auth: 'viewer',
  summary: 'Disable TOTP with a current code',
  body: s.code,
  responses: { 204: { description: 'Disabled' }, 400: err('TOTP not enabled'), 401: err('Wrong or expired code') },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    // Own transaction, committed before the check: a wrong code must stay counted.
    const attempt = await runInTransaction((trx) => claimTotpDisableAttempt({ trx, actor }));
    await runInTransaction((trx) => disableTotp({ trx, actor }, ctx.input.body.code, attempt));
    ctx.status = 204;
  },
});

add<{ challengeToken: string; code: string }>({
  method: 'post',
  path: '/2fa/verify',
  auth: 'public',
  summary: 'Second login step with a TOTP code or a recovery code; answers like login',
  description: 'Failed attempts count toward the account lockout.',
  body: s.verify2fa,
  responses: {
    200: { description: 'Logged in; Set-Cookie: refreshToken', schema: s.session },
    401: err('Wrong or expired code or challenge'),
    429: err('Account locked (Retry-After)'),
  },
  handler: async (ctx) => {
    const requestId = ctx.state.requestId;
    // Own transaction, committed before the check: a wrong code must stay counted.
    const user = await runInTransaction((trx) => claimCodeAttempt({ trx, requestId }, ctx.input.body.challengeToken));
    sendSession(ctx, await runInTransaction((trx) => verifySecondFactor({ trx, requestId }, user, ctx.input.body.code)));
  },
});

// ── WebAuthn / passkeys ─────────────────────────────────────────────────────────────────────
add({
  method: 'post',
  path: '/webauthn/register/options',
  auth: 'viewer',
  summary: 'Options for navigator.credentials.create() to add a passkey to the current user',
  responses: { 200: { description: 'PublicKeyCredentialCreationOptionsJSON', schema: s.webauthnOptions } },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => registrationOptions({ trx, actor }));
  },
});

add<{ response: RegistrationResponseJSON }>({
  method: 'post',
  path: '/webauthn/register/verify',
  auth: 'viewer',
  summary: 'Verify the attestation and store the passkey',
  body: s.webauthnRegisterVerify,
  responses: { 201: { description: 'Passkey stored', schema: s.passkey }, 400: err('No pending registration or verification failed') },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    // Own transaction: the challenge stays spent when the verification fails (single use).
    const challenge = await runInTransaction((trx) => takeRegistrationChallenge({ trx, actor }));
    ctx.body = await runInTransaction((trx) => verifyRegistration({ trx, actor }, challenge, ctx.input.body.response));
    ctx.status = 201;
  },
});

add({
  method: 'get',
  path: '/webauthn/credentials',
  auth: 'viewer',
  summary: "The current user's passkeys",
  responses: { 200: { description: 'Passkeys', schema: { type: 'array', items: s.passkey } } },
  handler: async (ctx) => {
    const { tenantId, userId } = ctx.state.actor;
    ctx.body = await listPasskeys(db(), tenantId, userId!);
  },
});

add({
  method: 'delete',
  path: '/webauthn/credentials/:id',
  auth: 'viewer',
  summary: 'Remove one of the current user’s passkeys',
  description: 'Needs a fresh proof (a login or POST /api/auth/reauthenticate within the last 5 minutes), else 401.',
  responses: {
    204: { description: 'Removed' },
    401: err('No fresh proof (WWW-Authenticate: insufficient_user_authentication): re-authenticate and retry'),
    404: err('Not found'),
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    await runInTransaction((trx) => deletePasskey({ trx, actor }, ctx.input.params.id));
    ctx.status = 204;
  },
});

add<{ challengeToken: string }>({
  method: 'post',
  path: '/webauthn/login/options',
  auth: 'public',
  summary: 'Options for navigator.credentials.get() after the password step (challengeToken from login)',
  body: s.webauthnLoginOptions,
  responses: {
    200: { description: 'PublicKeyCredentialRequestOptionsJSON', schema: s.webauthnOptions },
    400: err('No passkey registered'),
    401: err('Invalid or expired challenge'),
    429: err('Account locked'),
  },
  handler: async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const requestId = ctx.state.requestId;
    ctx.body = await runInTransaction((trx) => authenticationOptions({ trx, requestId }, ctx.input.body.challengeToken));
  },
});

add<{ challengeToken: string; response: AuthenticationResponseJSON }>({
  method: 'post',
  path: '/webauthn/login/verify',
  auth: 'public',
  summary: 'Finish the login with a passkey assertion; answers like login',
  body: s.webauthnLoginVerify,
  responses: {
    200: { description: 'Logged in; Set-Cookie: refreshToken', schema: s.session },
    401: err('Assertion or challenge invalid, or counter did not increase'),
    429: err('Account locked (Retry-After)'),
  },
  handler: async (ctx) => {
    const requestId = ctx.state.requestId;
    // Own transaction, committed before the check: a failure stays counted and the challenge spent.
    const attempt = await runInTransaction((trx) => claimPasskeyAttempt({ trx, requestId }, ctx.input.body.challengeToken));
    sendSession(ctx, await runInTransaction((trx) => verifyAuthentication({ trx, requestId }, attempt, ctx.input.body.response)));
  },
});

// ── Account self-service ────────────────────────────────────────────────────────────────────
add<{ email: string }>({
  method: 'post',
  path: '/password/forgot',
  auth: 'public',
  summary: 'E-mail a password-reset link (valid 30 minutes, single use) if the address has an active account',
  description:
    'Always 202 with the same body, whether the address is known or not (the same work is done either way; the e-mail is sent by a job). ' +
    'Rate limits: 5 per 60 minutes per e-mail address, 20 per 60 minutes per IP.',
  body: s.forgotPassword,
  before: [limitBy('passwordResetIp', clientIp)],
  responses: { 202: { description: 'Accepted', schema: s.forgotPasswordAnswer }, 400: err('Invalid input'), 429: err('Rate limit (Retry-After)') },
  handler: async (ctx) => {
    const { email } = ctx.input.body;
    await consume(ctx.limiters.passwordResetEmail, emailHash(email));
    const requestId = ctx.state.requestId;
    await runInTransaction((trx) => requestPasswordReset({ trx, requestId }, email));
    ctx.status = 202;
    ctx.body = { message: 'If the address belongs to an active account, a link to reset the password is on its way (valid for 30 minutes)' };
  },
});

add<{ token: string; password: string }>({
  method: 'post',
  path: '/password/reset',
  auth: 'public',
  summary: 'Set a new password with the token of a reset link; every session of the user ends',
  description: 'The token works once and for 30 minutes. A second factor stays enabled: the next login still asks for it.',
  body: s.resetPassword,
  responses: {
    204: { description: 'Password set' },
    400: err('Invalid input: password too short, or equal to the current one'),
    401: err('Reset token invalid, expired or already used'),
  },
  handler: async (ctx) => {
    const { token, password } = ctx.input.body;
    const requestId = ctx.state.requestId;
    // Checked and hashed outside the transaction (argon2); resetPassword checks the token again under its lock.
    const checked = await checkPasswordReset(db(), token, password);
    const passwordHash = await hashPassword(password);
    await runInTransaction((trx) => resetPassword({ trx, requestId }, checked, passwordHash));
    ctx.status = 204;
  },
});

add<{ currentPassword: string; newPassword: string }>({
  method: 'post',
  path: '/password/change',
  auth: 'viewer',
  summary: 'Change one’s own password; every session ends and a new one starts (answers like login)',
  description: 'A wrong current password counts toward the account lockout like a failed login.',
  body: s.changePassword,
  responses: {
    200: { description: 'Changed; a new session (Set-Cookie: refreshToken)', schema: s.session },
    400: err('Invalid input: new password too short, or equal to the current one'),
    401: err('Current password wrong'),
    429: err('Account locked (Retry-After)'),
  },
  handler: async (ctx) => {
    const { currentPassword, newPassword } = ctx.input.body;
    assertNewPassword(currentPassword, newPassword);
    const actor = ctx.state.actor;
    // Own transaction, committed before the check: a wrong password must stay counted.
    const claimed = await runInTransaction((trx) => claimProofAttempt({ trx, actor }));
    const currentPasswordRight = await verifyPassword(claimed.user.passwordHash, currentPassword);
    const newPasswordHash = currentPasswordRight ? await hashPassword(newPassword) : '';
    sendSession(ctx, await runInTransaction((trx) => changePassword({ trx, actor }, claimed, { currentPasswordRight, newPasswordHash })));
  },
});

add({
  method: 'post',
  path: '/webauthn/reauthenticate/options',
  auth: 'viewer',
  summary: 'Options for navigator.credentials.get() to re-authenticate the current user with a passkey',
  description: 'Answer with POST /api/auth/reauthenticate { passkey }.',
  before: [noStore],
  responses: { 200: { description: 'PublicKeyCredentialRequestOptionsJSON', schema: s.webauthnOptions }, 400: err('No passkey registered') },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => reauthenticationOptions({ trx, actor }));
  },
});

add<{ password?: string; code?: string; passkey?: AuthenticationResponseJSON }>({
  method: 'post',
  path: '/reauthenticate',
  auth: 'viewer',
  summary: 'Prove it is you again (password, a TOTP or recovery code, or a passkey): a new access token with a fresh proof',
  description:
    'Removing a passkey, enrolling TOTP (password or second factor) and new recovery codes (second factor) need a proof from the last 5 minutes. ' +
    'A login gives one; this renews it without a new session. Wrong answers count toward the account lockout.',
  body: s.reauthenticate,
  before: [noStore],
  responses: {
    200: { description: 'Access token with auth_time = now', schema: s.tokenOnly },
    400: err('Invalid input'),
    401: err('Wrong password or code'),
    429: err('Account locked (Retry-After)'),
  },
  handler: async (ctx) => {
    const { password, code, passkey } = ctx.input.body;
    const actor = ctx.state.actor;
    // Own transaction, committed before the check: a wrong answer stays counted, a passkey challenge spent.
    const claimed = await runInTransaction((trx) => claimProofAttempt({ trx, actor }, { passkey: passkey !== undefined }));
    const proof = passkey ? { passkey } : code !== undefined ? { code } : { passwordRight: await verifyPassword(claimed.user.passwordHash, password ?? '') };
    ctx.body = await runInTransaction((trx) => reauthenticate({ trx, actor }, claimed, proof));
  },
});

add({
  method: 'post',
  path: '/2fa/recovery-codes',
  auth: 'viewer',
  summary: 'Issue 10 new recovery codes (shown once); the old ones stop working',
  description:
    'Needs a second factor (TOTP code, recovery code or passkey) proved within the last 5 minutes: a login with it, or POST /api/auth/reauthenticate with a code.',
  before: [noStore],
  responses: {
    200: { description: 'New codes', schema: s.recoveryCodes },
    400: err('No second factor is enabled'),
    401: err('No fresh second-factor proof (WWW-Authenticate: insufficient_user_authentication)'),
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => regenerateRecoveryCodes({ trx, actor }));
  },
});

add({
  method: 'get',
  path: '/sessions',
  auth: 'viewer',
  summary: 'The current user’s sessions (refresh-token families), newest first',
  description: '`current` marks the session of the refresh cookie sent with the request.',
  responses: { 200: { description: 'Sessions', schema: { type: 'array', items: s.sessionInfo } } },
  handler: async (ctx) => {
    const { tenantId, userId } = ctx.state.actor;
    const cookie = readRefreshCookie(ctx);
    const current = await refreshFamilyOf(db(), cookie ? sha256Hex(cookie) : null);
    ctx.body = await listSessions(db(), tenantId, userId!, current, now());
  },
});

add({
  method: 'delete',
  path: '/sessions/:id',
  auth: 'viewer',
  summary: 'End one of the current user’s sessions: its refresh token stops working',
  description: 'Access tokens already issued to that session stay valid until they expire (at most 15 minutes).',
  responses: { 204: { description: 'Ended' }, 404: err('No such live session of the current user') },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    await runInTransaction((trx) => revokeSession({ trx, actor }, ctx.input.params.id));
    ctx.status = 204;
  },
});
