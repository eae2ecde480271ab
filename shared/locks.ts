import type { Knex } from 'knex';
import { runCompiledSql } from './db';

/**
 * Transaction-scoped advisory lock on a string key (released at commit, rollback, or when the
 * connection dies). Serializes the webhook pipeline's work per money movement and per
 * counterparty's supplier (unique indexes remain the final guard) and a tenant's live U30
 * submissions. Every key is built in this module so two cannot collide by accident.
 */
export async function lockKey(trx: Knex.Transaction, key: string): Promise<void> {
  await runCompiledSql(trx, 'select pg_advisory_xact_lock(hashtextextended(?, 0))', [key]);
}

/** lockKey without waiting: true if this transaction now holds the lock, false if another one does. */
export async function tryLockKey(trx: Knex.Transaction, key: string): Promise<boolean> {
  const [row] = await runCompiledSql<{ locked: boolean }>(trx, 'select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as locked', [key]);
  return row?.locked === true;
}

export const moneyLockKey = (tenantId: string, provider: string, externalId: string) => `webhook:money:${tenantId}:${provider}:${externalId}`;
/**
 * moneyLockKey as SQL over a webhook_events row (alias `we`): lets the job take the lock in its
 * first statement. The job compares the key this returns with moneyLockKey's, so a drift between
 * the two costs a second lock, never a missing one (test/api/webhooks/locks.test.ts).
 */
export const moneyLockKeySql = "concat('webhook:money:', we.tenant_id, ':', we.provider, ':', we.money_external_id)";
export const eventLockKey = (tenantId: string, provider: string, eventId: string) => `webhook:event:${tenantId}:${provider}:${eventId}`;
export const supplierLockKey = (tenantId: string, identity: string) => `webhook:supplier:${tenantId}:${identity}`;
/** A tenant's live U30 submissions (shared/commands/submitVatReturn.ts): the overlap check and the insert. */
export const submissionLockKey = (tenantId: string) => `report-submission:${tenantId}`;
/**
 * The recovery sweep of one deployment (shared/recovery.ts): one worker process at a time runs it.
 * A sweep narrowed to one tenant (an operator's or a test's) locks that tenant's part only.
 */
export const recoveryLockKey = (redisPrefix: string, tenantId?: string) => `recovery:${redisPrefix}${tenantId ? `:${tenantId}` : ''}`;
