import type { Knex } from 'knex';
import type { Actor } from './actor';

/** One audit row per change (who, what, when), written in the same transaction as the change. */
export async function audit(
  trx: Knex | Knex.Transaction,
  actor: Actor | null,
  entry: { tenantId?: string; action: string; entityType: string; entityId?: string | null; data?: Record<string, unknown> },
): Promise<void> {
  await trx('auditLog').insert({
    tenantId: entry.tenantId ?? actor?.tenantId ?? null,
    actorUserId: actor?.userId ?? null,
    action: entry.action,
    entityType: entry.entityType,
    entityId: entry.entityId ?? null,
    data: JSON.stringify(entry.data ?? {}),
    requestId: actor?.requestId ?? null,
  });
}
