import type { Middleware } from 'koa';
import { verifyAccessToken } from '../../shared/auth/accessToken';
import { forbidden, unauthorized } from '../../shared/errors';
import { hasRole, type Role } from '../../shared/actor';
import { db } from '../../shared/db';

/**
 * A token's role is a claim from up to 15 minutes ago. Every request checks the user's current
 * role and active flag, cached per process for a few seconds, so a deactivated or demoted user
 * loses access within USER_STATE_TTL_MS instead of when the token expires — at the cost of one
 * primary-key read per user every few seconds.
 */
const USER_STATE_TTL_MS = 5_000;
const MAX_CACHED = 10_000;
const userStates = new Map<string, { role: Role; active: boolean; at: number }>();

async function currentUserState(userId: string, tenantId: string) {
  const key = `${tenantId}:${userId}`;
  const hit = userStates.get(key);
  if (hit && Date.now() - hit.at < USER_STATE_TTL_MS) return hit;
  const row = await db()('users').where({ id: userId, tenantId }).first('role', 'active');
  const state = { role: (row?.role ?? 'viewer') as Role, active: Boolean(row?.active), at: Date.now() };
  if (userStates.size >= MAX_CACHED) userStates.clear();
  userStates.set(key, state);
  return state;
}

/** Drop cached user states (tests; an operator tool could call it after a mass change). */
export const forgetUserStates = () => userStates.clear();

/** Bearer JWT → ctx.state.actor. Missing or bad token: 401; expired: 401 TOKEN_EXPIRED. */
export const authenticate: Middleware = async (ctx, next) => {
  const header = ctx.get('Authorization');
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (!m) throw unauthorized('Authentication required: send Authorization: Bearer <access token>');
  const actor = verifyAccessToken(m[1]);
  const state = await currentUserState(actor.userId!, actor.tenantId);
  if (!state.active) throw unauthorized('The user no longer exists or is deactivated');
  ctx.state.actor = { ...actor, role: state.role, requestId: ctx.state.requestId };
  await next();
};

/** Declarative role check: the route states the lowest role it allows (roles are ordered). */
export function requireRole(minimum: Role): Middleware {
  return async (ctx, next) => {
    const actor = ctx.state.actor;
    if (!actor) throw unauthorized();
    if (!hasRole(actor.role, minimum)) throw forbidden(`This operation requires the ${minimum} role or higher`);
    await next();
  };
}
