import type { Context } from 'koa';
import { createRouter, type AppContext } from '../../routing';
import { consume, limitBy } from '../../middleware/rateLimit';
import { clientIp } from '../../middleware/clientIp';
import { errorEnvelope } from '../../schemas/common';
import { unauthorized } from '../../../shared/errors';
import { signAccessToken } from '../../../shared/auth/accessToken';
import { revokeRefreshFamily, rotateRefreshToken } from '../../../shared/auth/refreshTokens';
import { emailHash } from '../../../shared/auth/lockout';
import { passwordLogin, type Session } from '../../../shared/commands/login';
import { registerTenant } from '../../../shared/commands/registerTenant';
import { getUser } from '../../../shared/commands/users';
import { disableTotp, enableTotp, setupTotp, verifySecondFactor } from '../../../shared/commands/twoFactor';
import {
  authenticationOptions,
  deletePasskey,
  listPasskeys,
  registrationOptions,
  verifyAuthentication,
  verifyRegistration,
} from '../../../shared/commands/webauthn';
import { clearRefreshCookie, readRefreshCookie, setRefreshCookie } from './cookie';
import * as s from './schemas';

/**
 * Authentication: register, login (+ second factor), refresh, logout, me, TOTP and passkeys.
 * Handlers only translate HTTP ↔ commands; the rules live in shared/commands and shared/auth.
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
  handler: async (ctx) => sendSession(ctx, await registerTenant(ctx.input.body, ctx.state.requestId), 201),
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
    await consume(ctx.limiters.login, emailHash(email));
    const result = await passwordLogin({ email, password }, ctx.state.requestId);
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
    let rotated: Awaited<ReturnType<typeof rotateRefreshToken>>;
    try {
      rotated = await rotateRefreshToken(readRefreshCookie(ctx));
    } catch (e) {
      clearRefreshCookie(ctx);
      throw e;
    }
    setRefreshCookie(ctx, rotated.refresh.token, ctx.config.refreshTtlSec);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { token: signAccessToken({ sub: rotated.user.id, tid: rotated.user.tenantId, role: rotated.user.role as never }) };
  },
});

add({
  method: 'post',
  path: '/logout',
  auth: 'public',
  summary: 'Revoke the refresh token family of the cookie and clear the cookie',
  responses: { 204: { description: 'Logged out' } },
  handler: async (ctx) => {
    await revokeRefreshFamily(readRefreshCookie(ctx));
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
    const user = await getUser(ctx.state.actor, ctx.state.actor.userId!).catch(() => null);
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
  before: [noStore],
  responses: { 200: { description: 'Scan this', schema: s.totpSetup }, 400: err('TOTP already enabled') },
  handler: async (ctx) => {
    ctx.body = await setupTotp(ctx.state.actor);
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
    ctx.body = await enableTotp(ctx.state.actor, ctx.input.body.code);
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
    await disableTotp(ctx.state.actor, ctx.input.body.code);
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
  handler: async (ctx) => sendSession(ctx, await verifySecondFactor(ctx.input.body.challengeToken, ctx.input.body.code, ctx.state.requestId)),
});

// ── WebAuthn / passkeys ─────────────────────────────────────────────────────────────────────
add({
  method: 'post',
  path: '/webauthn/register/options',
  auth: 'viewer',
  summary: 'Options for navigator.credentials.create() to add a passkey to the current user',
  responses: { 200: { description: 'PublicKeyCredentialCreationOptionsJSON', schema: s.webauthnOptions } },
  handler: async (ctx) => {
    ctx.body = await registrationOptions(ctx.state.actor);
  },
});

add<{ response: any }>({
  method: 'post',
  path: '/webauthn/register/verify',
  auth: 'viewer',
  summary: 'Verify the attestation and store the passkey',
  body: s.webauthnRegisterVerify,
  responses: { 201: { description: 'Passkey stored', schema: s.passkey }, 400: err('No pending registration or verification failed') },
  handler: async (ctx) => {
    ctx.status = 201;
    ctx.body = await verifyRegistration(ctx.state.actor, ctx.input.body.response);
  },
});

add({
  method: 'get',
  path: '/webauthn/credentials',
  auth: 'viewer',
  summary: "The current user's passkeys",
  responses: { 200: { description: 'Passkeys', schema: { type: 'array', items: s.passkey } } },
  handler: async (ctx) => {
    ctx.body = await listPasskeys(ctx.state.actor);
  },
});

add({
  method: 'delete',
  path: '/webauthn/credentials/:id',
  auth: 'viewer',
  summary: 'Remove one of the current user’s passkeys',
  responses: { 204: { description: 'Removed' }, 404: err('Not found') },
  handler: async (ctx) => {
    await deletePasskey(ctx.state.actor, ctx.input.params.id);
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
    ctx.body = await authenticationOptions(ctx.input.body.challengeToken);
  },
});

add<{ challengeToken: string; response: any }>({
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
  handler: async (ctx) => sendSession(ctx, await verifyAuthentication(ctx.input.body.challengeToken, ctx.input.body.response, ctx.state.requestId)),
});
