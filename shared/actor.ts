/** Who performs an operation. Commands take an Actor; every query is scoped by actor.tenantId. */
export type Role = 'admin' | 'manager' | 'member' | 'viewer';
export const ROLES: Role[] = ['viewer', 'member', 'manager', 'admin'];

export interface Actor {
  userId: string | null;
  tenantId: string;
  role: Role;
  requestId?: string;
  /**
   * From the access token of an interactive login (OpenID Connect claim names): when the user last
   * proved a password or second factor (unix seconds) and which (RFC 8176 values: pwd, otp, hwk).
   * Absent after a refresh: a fresh proof is only what just happened (shared/auth/freshProof.ts).
   */
  authTime?: number;
  amr?: string[];
  /**
   * Set when an API key acts (docs/auth.md, "API keys"): userId is then null and the role is the
   * key's. Routes that manage people or credentials refuse such an actor (api/middleware/authenticate.ts).
   */
  apiKeyId?: string;
}

/** Roles are ordered: a route that allows 'member' also allows manager and admin. */
export const roleRank = (r: Role) => ROLES.indexOf(r);
export const hasRole = (actual: Role, minimum: Role) => roleRank(actual) >= roleRank(minimum);

/** A system actor for jobs that act on behalf of a tenant without a user (webhooks, schedules). */
export const systemActor = (tenantId: string, requestId?: string): Actor => ({ userId: null, tenantId, role: 'admin', requestId });
