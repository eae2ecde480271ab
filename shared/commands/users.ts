import type { Knex } from 'knex';
import { audit } from '../audit';
import { hasRole, type Actor, type Role } from '../actor';
import { dependency, duplicate, forbidden, notFound } from '../errors';
import { hashPassword } from '../auth/passwords';
import { revokeUserRefreshTokens } from '../auth/refreshTokens';
import { currentActor } from '../auth/currentActor';
import { User } from '../models/User';
import { emailInUse } from '../queries/auth';
import { getUser, type UserView } from '../queries/users';
import { queueAccountNotice } from './account';
import type { CommandContext } from './types';

/**
 * Team management. Admins manage everyone; managers manage members and viewers only (they can
 * neither create, change nor deactivate an admin or manager, nor promote anyone to those roles).
 * A tenant always keeps at least one active admin: demoting or deactivating the last one is
 * 400 DEPENDENCY (the tenant depends on it). Every query is scoped by the actor's tenant; the
 * actor's role is re-read (currentActor), not taken from the access token.
 */

/** Managers may only act on, and hand out, roles below manager. */
function assertMayManage(actor: Actor, role: Role): void {
  if (actor.role === 'admin') return;
  if (hasRole(role, 'manager')) throw forbidden('Managers can only manage members and viewers');
}

export interface CreateUserInput {
  email: string;
  name: string;
  role: Role;
  password: string;
}

export async function createUser({ trx, actor: tokenActor }: CommandContext, input: CreateUserInput): Promise<UserView> {
  const actor = await currentActor(trx, tokenActor, 'manager');
  assertMayManage(actor, input.role);
  const email = input.email.trim();
  if (await emailInUse(trx, email)) throw duplicate('A user with this e-mail address already exists');
  const passwordHash = await hashPassword(input.password);
  const user = await User.query(trx).insert({ tenantId: actor.tenantId, email, name: input.name.trim(), role: input.role, passwordHash }).returning('*');
  await audit(trx, actor, { action: 'user.created', entityType: 'user', entityId: user.id, data: { role: input.role } });
  return getUser(trx, actor.tenantId, user.id);
}

/**
 * Lock the tenant's active admins (in id order, so concurrent changes serialize instead of
 * deadlocking), then the target. Returns the target row and the number of active admins.
 */
async function lockTarget(trx: Knex.Transaction, actor: Actor, id: string) {
  const admins = await User.query(trx).where({ tenantId: actor.tenantId, role: 'admin', active: true }).orderBy('id').forUpdate().select('id');
  const target = await User.query(trx).where({ tenantId: actor.tenantId, id }).forUpdate().select('id', 'role', 'active').first();
  if (!target) throw notFound('User');
  return { target, activeAdmins: admins.length };
}

const lastAdmin = () => dependency('The tenant must keep at least one active admin; appoint another admin first');

export interface UpdateUserInput {
  name?: string;
  role?: Role;
  password?: string;
}

export async function updateUser({ trx, actor: tokenActor }: CommandContext, id: string, input: UpdateUserInput): Promise<UserView> {
  // Hashed before any row is locked: argon2 takes tens of milliseconds.
  const passwordHash = input.password ? await hashPassword(input.password) : undefined;
  const actor = await currentActor(trx, tokenActor, 'manager');
  const { target, activeAdmins } = await lockTarget(trx, actor, id);
  assertMayManage(actor, target.role);
  if (input.role) assertMayManage(actor, input.role);
  if (target.role === 'admin' && target.active && input.role && input.role !== 'admin' && activeAdmins <= 1) throw lastAdmin();
  const patch: Partial<Pick<User, 'name' | 'role' | 'passwordHash'>> = {};
  if (input.name !== undefined) patch.name = input.name.trim();
  if (input.role !== undefined) patch.role = input.role;
  if (passwordHash) patch.passwordHash = passwordHash;
  if (Object.keys(patch).length) {
    await User.query(trx)
      .where({ tenantId: actor.tenantId, id })
      .patch({ ...patch, updatedAt: trx.fn.now() });
    // A new password ends every session of that user (a stolen refresh cookie dies with it), and
    // a reset link asked for before it would undo it.
    if (passwordHash) {
      await revokeUserRefreshTokens(trx, actor.tenantId, id);
      await trx('passwordResets').where({ tenantId: actor.tenantId, userId: id }).delete();
    }
    await audit(trx, actor, {
      action: 'user.updated',
      entityType: 'user',
      entityId: id,
      data: {
        fields: Object.keys(patch).map((k) => (k === 'passwordHash' ? 'password' : k)),
        ...(input.role ? { fromRole: target.role, toRole: input.role } : {}),
      },
    });
  }
  return getUser(trx, actor.tenantId, id);
}

/** DELETE deactivates: the row stays (audit trail, invoices reference it), sessions end. */
export async function deactivateUser({ trx, actor: tokenActor }: CommandContext, id: string): Promise<void> {
  const actor = await currentActor(trx, tokenActor, 'manager');
  const { target, activeAdmins } = await lockTarget(trx, actor, id);
  assertMayManage(actor, target.role);
  if (!target.active) return;
  if (target.role === 'admin' && activeAdmins <= 1) throw lastAdmin();
  await User.query(trx).where({ tenantId: actor.tenantId, id }).patch({ active: false, updatedAt: trx.fn.now() });
  await revokeUserRefreshTokens(trx, actor.tenantId, id);
  await audit(trx, actor, { action: 'user.deactivated', entityType: 'user', entityId: id });
}

/**
 * An admin removes a user's second factor (TOTP, every passkey, the recovery codes) for a user who
 * lost it: audited, and the user is e-mailed. Not on oneself: a stolen admin token would
 * otherwise strip its own account's second factor; another admin does it.
 */
export async function resetUserTwoFactor({ trx, actor: tokenActor }: CommandContext, id: string): Promise<UserView> {
  const actor = await currentActor(trx, tokenActor, 'admin');
  const target = await User.query(trx).where({ tenantId: actor.tenantId, id }).forUpdate().first();
  if (!target) throw notFound('User');
  if (target.id === actor.userId) throw forbidden('Another admin must reset your own second factor');
  const passkeys = await trx('webauthnCredentials').where({ tenantId: actor.tenantId, userId: id }).delete();
  await User.query(trx)
    .where({ tenantId: actor.tenantId, id })
    .patch({ totpEnabled: false, totpSecretEnc: null, totpLastStep: null, recoveryCodes: [], webauthnChallenge: null, updatedAt: trx.fn.now() });
  await audit(trx, actor, { action: 'user.two_factor_reset', entityType: 'user', entityId: id, data: { totp: target.totpEnabled, passkeys } });
  await queueAccountNotice(trx, target, 'two-factor-reset');
  return getUser(trx, actor.tenantId, id);
}

/** An admin reactivates a deactivated user: audited and e-mailed; an active user is answered as is. */
export async function reactivateUser({ trx, actor: tokenActor }: CommandContext, id: string): Promise<UserView> {
  const actor = await currentActor(trx, tokenActor, 'admin');
  const target = await User.query(trx).where({ tenantId: actor.tenantId, id }).forUpdate().first();
  if (!target) throw notFound('User');
  if (!target.active) {
    // A fresh start: the lockout of the old account does not carry over.
    await User.query(trx)
      .where({ tenantId: actor.tenantId, id })
      .patch({ active: true, failedLoginCount: 0, lockoutCount: 0, lockedUntil: null, updatedAt: trx.fn.now() });
    await audit(trx, actor, { action: 'user.reactivated', entityType: 'user', entityId: id });
    await queueAccountNotice(trx, target, 'reactivated');
  }
  return getUser(trx, actor.tenantId, id);
}
