import type { Context, Middleware } from 'koa';
import { verifyAccessToken } from '../../shared/auth/accessToken';
import { forbidden, unauthorized } from '../../shared/errors';
import { hasRole, type Role } from '../../shared/actor';
import { db } from '../../shared/db';
import { authenticateApiKey, isApiKey } from '../../shared/auth/apiKeys';
import { consume, type Limiters } from './rateLimit';

/**
 * A token's role is a claim from up to 15 minutes ago. Every request checks the user's current
 * role and active flag, cached per process for a few seconds, so a deactivated or demoted user
 * loses access within USER_STATE_TTL_MS instead of when the token expires — at the cost of one
 * primary-key read per user every few seconds.
 */
const USER_STATE_TTL_MS = 5_000;
const MAX_CACHED = 10_000;
type UserState = { role: Role; active: boolean; at: number };
const userStates = new Map<string, UserState>();

/**
 * The user's state while its cached read is fresh, else a promise of a new read: not async, so a
 * hit (nearly every request) costs no promise.
 */
function currentUserState(userId: string, tenantId: string): UserState | Promise<UserState> {
  const hit = userStates.get(`${tenantId}:${userId}`);
  if (hit && Date.now() - hit.at < USER_STATE_TTL_MS) return hit;
  return readUserState(userId, tenantId);
}

async function readUserState(userId: string, tenantId: string): Promise<UserState> {
  const key = `${tenantId}:${userId}`;
  const row = await db()('users').where({ id: userId, tenantId }).first('role', 'active');
  const state = { role: (row?.role ?? 'viewer') as Role, active: Boolean(row?.active), at: Date.now() };
  if (userStates.size >= MAX_CACHED) userStates.clear();
  userStates.set(key, state);
  return state;
}

/** Drop cached user states (tests; an operator tool could call it after a mass change). */
export const forgetUserStates = () => userStates.clear();

/**
 * What an API key may never reach, whatever its role: people and credentials (users, API keys,
 * second factors, passkeys, sessions, passwords: all of /api/auth). A leaked key must not be able
 * to mint more keys, lock people out or hide its own use (docs/auth.md, "API keys").
 */
export const API_KEY_REFUSED_PREFIXES = ['/api/users', '/api/api-keys', '/api/auth'];
const refusedToKeys = (path: string) => API_KEY_REFUSED_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`));

/**
 * Bearer JWT or API key → ctx.state.actor. Missing or bad token: 401; expired: 401 TOKEN_EXPIRED.
 * An API key (ak_live_…) is checked against its row on every request and counted against the
 * general limit per key, as every request is per IP (api/app.ts).
 */
async function identify(ctx: Context): Promise<void> {
  const header = ctx.get('Authorization');
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (!m) throw unauthorized('Authentication required: send Authorization: Bearer <access token>');
  if (isApiKey(m[1])) {
    const keyActor = await authenticateApiKey(db(), m[1]);
    await consume((ctx as unknown as { limiters: Limiters }).limiters.api, `key:${keyActor.apiKeyId}`);
    if (refusedToKeys(ctx.path)) throw forbidden('API keys cannot manage users, API keys, second factors or sessions; sign in as a person');
    ctx.state.actor = { ...keyActor, requestId: ctx.state.requestId };
    return;
  }
  const actor = verifyAccessToken(m[1]);
  const cached = currentUserState(actor.userId!, actor.tenantId);
  const state = cached instanceof Promise ? await cached : cached;
  if (!state.active) throw unauthorized('The user no longer exists or is deactivated');
  ctx.state.actor = { ...actor, role: state.role, requestId: ctx.state.requestId };
}

/**
 * A route's authentication and its declarative role check (the route states the lowest role it
 * allows; roles are ordered), in this order, as one middleware: one async layer less on every
 * authenticated request (api/middleware/requestFrame.ts says why that counts).
 */
export function authenticateAs(minimum: Role): Middleware {
  return async (ctx, next) => {
    await identify(ctx);
    if (!hasRole(ctx.state.actor.role, minimum)) throw forbidden(`This operation requires the ${minimum} role or higher`);
    await next();
  };
}
