import { db } from '../db';
import { audit } from '../audit';
import { duplicate } from '../errors';
import { hashPassword } from '../auth/passwords';
import type { Plan } from '../plans';
import { completeLogin, findUserByEmail, type Session } from './login';

export interface RegisterInput {
  email: string;
  password: string;
  name: string;
  companyName: string;
  country?: string;
  plan?: Plan;
}

/**
 * Sign-up: a new tenant and its first admin in one transaction, then a session like a login.
 * E-mails are unique service-wide (login is by e-mail alone); the unique index on lower(email)
 * settles a race between two registrations, and it becomes 409 DUPLICATE.
 */
export async function registerTenant(input: RegisterInput, requestId?: string): Promise<Session> {
  const email = input.email.trim();
  if (await findUserByEmail(email)) throw duplicate('A user with this e-mail address already exists');
  const passwordHash = await hashPassword(input.password);
  const userId = await db()
    .transaction(async (trx) => {
      const [tenant] = await trx('tenants')
        .insert({ name: input.companyName.trim(), country: input.country ?? 'AT', plan: input.plan ?? 'free' })
        .returning(['id']);
      const [user] = await trx('users').insert({ tenantId: tenant.id, email, name: input.name.trim(), role: 'admin', passwordHash }).returning(['id']);
      const actor = { userId: user.id, tenantId: tenant.id, role: 'admin' as const, requestId };
      await audit(trx, actor, {
        action: 'tenant.registered',
        entityType: 'tenant',
        entityId: tenant.id,
        data: { country: input.country ?? 'AT', plan: input.plan ?? 'free' },
      });
      await audit(trx, actor, { action: 'user.created', entityType: 'user', entityId: user.id, data: { role: 'admin' } });
      return user.id as string;
    })
    .catch((err) => {
      if ((err as { code?: string }).code === '23505') throw duplicate('A user with this e-mail address already exists');
      throw err;
    });
  return completeLogin(userId, 'register', requestId);
}
