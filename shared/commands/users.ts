import type { Knex } from 'knex';
import { db } from '../db';
import { audit } from '../audit';
import { hasRole, type Actor, type Role } from '../actor';
import { dependency, duplicate, forbidden, notFound } from '../errors';
import { hashPassword } from '../auth/passwords';
import { revokeUserRefreshTokens } from '../auth/refreshTokens';
import { currentActor } from '../auth/currentActor';

/**
 * Team management. Admins manage everyone; managers manage members and viewers only (they can
 * neither create, change nor deactivate an admin or manager, nor promote anyone to those roles).
 * A tenant always keeps at least one active admin: demoting or deactivating the last one is
 * 400 DEPENDENCY (the tenant depends on it). Every query is scoped by the actor's tenant.
 */
export interface UserView {
  id: string;
  email: string;
  name: string;
  role: Role;
  tenantId: string;
  active: boolean;
  twoFactorEnabled: boolean;
  createdAt: string;
  lastLoginAt: string | null;
}

const iso = (v: Date | string | null) => (v ? new Date(v).toISOString() : null);

function selectUsers(q: Knex | Knex.Transaction, tenantId: string) {
  return q('users')
    .where('users.tenantId', tenantId)
    .select(
      'users.id',
      'users.email',
      'users.name',
      'users.role',
      'users.tenantId',
      'users.active',
      'users.createdAt',
      'users.lastLoginAt',
      q.raw(
        '(users.totp_enabled or exists (select 1 from webauthn_credentials w where w.user_id = users.id and w.tenant_id = users.tenant_id)) as "twoFactorEnabled"',
      ),
    );
}

const view = (r: Record<string, any>): UserView => ({
  id: r.id,
  email: r.email,
  name: r.name,
  role: r.role,
  tenantId: r.tenantId,
  active: r.active,
  twoFactorEnabled: !!r.twoFactorEnabled,
  createdAt: iso(r.createdAt)!,
  lastLoginAt: iso(r.lastLoginAt),
});

export async function getUser(actor: Actor, id: string, trx: Knex | Knex.Transaction = db()): Promise<UserView> {
  const row = await selectUsers(trx, actor.tenantId).where('users.id', id).first();
  if (!row) throw notFound('User');
  return view(row);
}

export async function listUsers(actor: Actor, page: { page: number; limit: number }) {
  const [{ total }] = await db()('users').where({ tenantId: actor.tenantId }).count({ total: '*' });
  const rows = await selectUsers(db(), actor.tenantId)
    .orderBy([
      { column: 'users.createdAt', order: 'asc' },
      { column: 'users.id', order: 'asc' },
    ])
    .limit(page.limit)
    .offset((page.page - 1) * page.limit);
  const t = Number(total);
  return { data: rows.map(view), pagination: { page: page.page, limit: page.limit, total: t, totalPages: Math.ceil(t / page.limit) } };
}

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

export async function createUser(tokenActor: Actor, input: CreateUserInput): Promise<UserView> {
  const actor = await currentActor(db(), tokenActor, 'manager');
  assertMayManage(actor, input.role);
  const email = input.email.trim();
  const exists = await db()('users').whereRaw('lower(email) = ?', [email.toLowerCase()]).first('id');
  if (exists) throw duplicate('A user with this e-mail address already exists');
  const passwordHash = await hashPassword(input.password);
  return db().transaction(async (trx) => {
    const [row] = await trx('users').insert({ tenantId: actor.tenantId, email, name: input.name.trim(), role: input.role, passwordHash }).returning('id');
    await audit(trx, actor, { action: 'user.created', entityType: 'user', entityId: row.id, data: { role: input.role } });
    return getUser(actor, row.id, trx);
  });
}

/**
 * Lock the tenant's active admins (in id order, so concurrent changes serialize instead of
 * deadlocking), then the target. Returns the target row and the number of active admins.
 */
async function lockTarget(trx: Knex.Transaction, actor: Actor, id: string) {
  const admins: { id: string }[] = await trx('users').where({ tenantId: actor.tenantId, role: 'admin', active: true }).orderBy('id').forUpdate().select('id');
  const target = await trx('users').where({ tenantId: actor.tenantId, id }).forUpdate().first('id', 'role', 'active');
  if (!target) throw notFound('User');
  return { target, activeAdmins: admins.length };
}

const lastAdmin = () => dependency('The tenant must keep at least one active admin; appoint another admin first');

export interface UpdateUserInput {
  name?: string;
  role?: Role;
  password?: string;
}

export async function updateUser(tokenActor: Actor, id: string, input: UpdateUserInput): Promise<UserView> {
  const passwordHash = input.password ? await hashPassword(input.password) : undefined;
  return db().transaction(async (trx) => {
    const actor = await currentActor(trx, tokenActor, 'manager');
    const { target, activeAdmins } = await lockTarget(trx, actor, id);
    assertMayManage(actor, target.role);
    if (input.role) assertMayManage(actor, input.role);
    if (target.role === 'admin' && target.active && input.role && input.role !== 'admin' && activeAdmins <= 1) throw lastAdmin();
    const patch: Record<string, unknown> = {};
    if (input.name !== undefined) patch.name = input.name.trim();
    if (input.role !== undefined) patch.role = input.role;
    if (passwordHash) patch.passwordHash = passwordHash;
    if (Object.keys(patch).length) {
      await trx('users')
        .where({ tenantId: actor.tenantId, id })
        .update({ ...patch, updatedAt: trx.fn.now() });
      // A new password ends every session of that user (a stolen refresh cookie dies with it).
      if (passwordHash) await revokeUserRefreshTokens(trx, actor.tenantId, id);
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
    return getUser(actor, id, trx);
  });
}

/** DELETE deactivates: the row stays (audit trail, invoices reference it), sessions end. */
export async function deactivateUser(tokenActor: Actor, id: string): Promise<void> {
  await db().transaction(async (trx) => {
    const actor = await currentActor(trx, tokenActor, 'manager');
    const { target, activeAdmins } = await lockTarget(trx, actor, id);
    assertMayManage(actor, target.role);
    if (!target.active) return;
    if (target.role === 'admin' && activeAdmins <= 1) throw lastAdmin();
    await trx('users').where({ tenantId: actor.tenantId, id }).update({ active: false, updatedAt: trx.fn.now() });
    await revokeUserRefreshTokens(trx, actor.tenantId, id);
    await audit(trx, actor, { action: 'user.deactivated', entityType: 'user', entityId: id });
  });
}
