import type { Knex } from 'knex';
import { hasRole, type Actor, type Role } from '../actor';
import { forbidden, unauthorized } from '../errors';

/**
 * Access tokens carry the role for up to 15 minutes. Privilege-changing commands (team
 * management, settings) re-read the actor's current role and status instead, so a demoted or
 * deactivated user cannot use a still-valid token to act with the old rights.
 */
export async function currentActor(q: Knex | Knex.Transaction, actor: Actor, minimum: Role): Promise<Actor> {
  if (!actor.userId) {
    // A system actor (jobs), or an API key: its row was read for this very request, its role is its own.
    if (actor.apiKeyId && !hasRole(actor.role, minimum)) throw forbidden(`This operation requires the ${minimum} role or higher`);
    return actor;
  }
  const row = await q('users').where({ id: actor.userId, tenantId: actor.tenantId }).first('role', 'active');
  if (!row?.active) throw unauthorized('The user no longer exists or is deactivated');
  if (!hasRole(row.role, minimum)) throw forbidden(`This operation requires the ${minimum} role or higher`);
  return { ...actor, role: row.role };
}
