import type { Db } from '../db';
import type { Role } from '../actor';
import { notFound } from '../errors';
import type { User } from '../models/User';
import { pageEnvelope } from './paging';

/** A user as the team API shows it: never a hash, secret or counter. */
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

/** What selectUsers reads: the shown columns and whether any second factor is set up. */
type UserListRow = Pick<User, 'id' | 'email' | 'name' | 'role' | 'tenantId' | 'active' | 'createdAt' | 'lastLoginAt'> & { twoFactorEnabled: boolean };

const iso = (v: Date | string | null) => (v ? new Date(v).toISOString() : null);

// Hand-written (a list with a per-row exists): one statement for the page instead of a query per user.
function selectUsers(q: Db, tenantId: string) {
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

const view = (r: UserListRow): UserView => ({
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

export async function getUser(q: Db, tenantId: string, id: string): Promise<UserView> {
  const row: UserListRow | undefined = await selectUsers(q, tenantId).where('users.id', id).first();
  if (!row) throw notFound('User');
  return view(row);
}

export async function listUsers(q: Db, tenantId: string, page: { page: number; limit: number }) {
  const [{ total }] = await q('users').where({ tenantId }).count<{ total: number }[]>({ total: '*' });
  const rows: UserListRow[] = await selectUsers(q, tenantId)
    .orderBy([
      { column: 'users.createdAt', order: 'asc' },
      { column: 'users.id', order: 'asc' },
    ])
    .limit(page.limit)
    .offset((page.page - 1) * page.limit);
  const t = Number(total);
  return { data: rows.map(view), pagination: pageEnvelope(page, t) };
}

/** Where a notice about an account goes: the user's address and name (deactivated users too). */
export const findAccountRecipient = (q: Db, tenantId: string, userId: string): Promise<{ email: string; name: string } | undefined> =>
  q('users').where({ tenantId, id: userId }).first('email', 'name');
