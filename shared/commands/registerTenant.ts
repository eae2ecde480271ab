import { audit } from '../audit';
import { duplicate } from '../errors';
import { hashPassword } from '../auth/passwords';
import type { Plan } from '../plans';
import { Tenant } from '../models/Tenant';
import { User } from '../models/User';
import { emailInUse } from '../queries/auth';
import { completeLogin, type Session } from './login';
import type { AnonymousContext } from './types';

export interface RegisterInput {
  email: string;
  password: string;
  name: string;
  companyName: string;
  country?: string;
  plan?: Plan;
}

const emailTaken = () => duplicate('A user with this e-mail address already exists');

/**
 * Sign-up: a new tenant and its first admin, then a session like a login, all in the caller's
 * transaction. E-mails are unique service-wide (login is by e-mail alone); the unique index on
 * lower(email) settles a race between two registrations, and it becomes 409 DUPLICATE.
 */
export async function registerTenant(ctx: AnonymousContext, input: RegisterInput): Promise<Session> {
  const { trx, requestId } = ctx;
  const email = input.email.trim();
  if (await emailInUse(trx, email)) throw emailTaken();
  const passwordHash = await hashPassword(input.password);
  const tenant = await Tenant.query(trx)
    .insert({ name: input.companyName.trim(), country: input.country ?? 'AT', plan: input.plan ?? 'free' })
    .returning('*');
  const user = await User.query(trx)
    .insert({ tenantId: tenant.id, email, name: input.name.trim(), role: 'admin', passwordHash })
    .returning('*')
    .catch((err: { code?: string; nativeError?: { code?: string } }) => {
      // objection wraps the driver's error (db-errors); the unique index on lower(email) is the only one here.
      if ((err.code ?? err.nativeError?.code) === '23505') throw emailTaken();
      throw err;
    });
  const actor = { userId: user.id, tenantId: tenant.id, role: 'admin' as const, requestId };
  await audit(trx, actor, {
    action: 'tenant.registered',
    entityType: 'tenant',
    entityId: tenant.id,
    data: { country: input.country ?? 'AT', plan: input.plan ?? 'free' },
  });
  await audit(trx, actor, { action: 'user.created', entityType: 'user', entityId: user.id, data: { role: 'admin' } });
  return completeLogin(ctx, user, 'register');
}
