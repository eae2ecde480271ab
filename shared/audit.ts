import type { Knex } from 'knex';
import type { Actor } from './actor';
import { storableJson } from './storable';

/**
 * One audit row per change (who, what, when), written in the same transaction as the change. The
 * data may quote what came from outside (a provider's ids, a name): stored through storableJson
 * (shared/storable.ts), so that a U+0000 or a lone surrogate in it cannot fail the change itself.
 */
export async function audit(
  trx: Knex | Knex.Transaction,
  actor: Actor | null,
  entry: { tenantId?: string; action: string; entityType: string; entityId?: string | null; data?: Record<string, unknown> },
): Promise<void> {
  await trx('auditLog').insert({
    tenantId: entry.tenantId ?? actor?.tenantId ?? null,
    actorUserId: actor?.userId ?? null,
    actorApiKeyId: actor?.apiKeyId ?? null,
    action: entry.action,
    entityType: entry.entityType,
    entityId: entry.entityId ?? null,
    data: storableJson(entry.data ?? {}),
    requestId: actor?.requestId ?? null,
  });
}

/**
 * The audit row for an entity that a data-modifying CTE `cte` of the same statement inserts (its
 * tenant_id and id columns), for writes that are one statement instead of two round trips. Plain
 * values, the data as JSON text: the caller may compile the statement once (runCompiled).
 */
export function auditOfInserted(
  trx: Knex | Knex.Transaction,
  cte: string,
  row: { actorUserId: string | null; actorApiKeyId?: string | null; action: string; entityType: string; dataJson: string; requestId: string | null },
): Knex.Raw {
  return trx.raw(
    `insert into audit_log (tenant_id, actor_user_id, actor_api_key_id, action, entity_type, entity_id, data, request_id)
     select ??.tenant_id, ?, ?::uuid, ?, ?, ??.id, ?::jsonb, ? from ??`,
    [cte, row.actorUserId, row.actorApiKeyId ?? null, row.action, row.entityType, cte, row.dataJson, row.requestId, cte],
  );
}
