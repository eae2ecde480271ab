import { recordWebhookOutcome } from '../metrics';
import type { Knex } from 'knex';
import { db, runCompiled } from '../db';
import { runInTransaction } from '../outbox';
import type { NormalizedEvent } from '../providers/payments/types';
import { moneyLockKeySql } from '../locks';
import type { ConnectorSettings } from '../domain/connectorSettings';
import { runPipeline, type PipelineResult } from './pipeline';
import { storable } from '../storable';

export interface ProcessOutcome {
  status: 'processed' | 'duplicate' | 'skipped';
  invoiceId?: string | null;
  reason?: string;
  result?: PipelineResult;
  provider?: string;
}

/**
 * The job's work: one stored webhook event through the pipeline, in one transaction. The log row
 * is locked first; a row that is no longer pending was finished by an earlier attempt (a retry
 * after a crash between commit and acknowledgement) and is left alone. The row's status,
 * invoice and processed_at are written in the same transaction as the booking, so a crash
 * anywhere leaves either everything or nothing, and the retry starts from a clean slate.
 */
export async function processStoredEvent(eventRowId: string, tenantId: string): Promise<ProcessOutcome> {
  const outcome = await runInTransaction((trx) => processInTransaction(trx, { eventRowId, tenantId }));
  countOutcomes([outcome]);
  return outcome;
}

export interface StoredEventRef {
  eventRowId: string;
  tenantId: string;
}

/**
 * A batch waits at most this long for any one lock (a row lock; a money movement's, event's or
 * counterparty's advisory lock; another transaction's uncommitted invoice with the same external
 * id). Batches take locks in no common order and could deadlock; rather than wait for PostgreSQL's
 * deadlock check (1 s), a contended batch gives up at once and its events run one by one.
 */
export const BATCH_LOCK_TIMEOUT_MS = 100;

/**
 * Several stored events in ONE transaction, each exactly as processStoredEvent does it. All or
 * nothing: if any throws, the batch rolls back and the caller runs each event alone. Two events
 * of one money movement are safe: advisory locks are re-entrant, and the second sees the first
 * one's invoice and ends duplicate (docs/webhooks.md, "Batches").
 */
export async function processStoredEventBatch(events: readonly StoredEventRef[]): Promise<ProcessOutcome[]> {
  const outcomes = await runInTransaction(async (trx) => {
    await trx.raw(`set local lock_timeout = ${BATCH_LOCK_TIMEOUT_MS}`);
    const done: ProcessOutcome[] = [];
    for (const ref of events) done.push(await processInTransaction(trx, ref));
    return done;
  });
  countOutcomes(outcomes);
  return outcomes;
}

/** Counted after commit, so a rolled-back attempt is not counted twice. */
function countOutcomes(outcomes: readonly ProcessOutcome[]): void {
  for (const o of outcomes) if (o.status !== 'skipped' && o.provider) recordWebhookOutcome(o.provider, o.status);
}

async function processInTransaction(trx: Knex.Transaction, { eventRowId, tenantId }: StoredEventRef): Promise<ProcessOutcome> {
  // One statement for the row lock, the connector's settings, the tenant's country and
  // currency (three round trips before) and the money movement's advisory lock (one more).
  // That lock is taken here only for a pending payment or refund without related movements:
  // with related ones (Mollie) the pipeline takes their locks oldest first, and taking the
  // main one before them could deadlock against another event of the same payment.
  const [row] = await runCompiled<Record<string, any>>(trx, 'webhook-job:event', [eventRowId, tenantId], (id, tenant) =>
    trx('webhookEvents as we')
      .join('tenants as t', 't.id', 'we.tenantId')
      .leftJoin('connectorInstallations as ci', function () {
        this.on('ci.id', '=', 'we.connectorId').andOn('ci.tenantId', '=', 'we.tenantId');
      })
      .where({ 'we.id': id, 'we.tenantId': tenant })
      .forUpdate('we')
      .first(
        'we.status',
        'we.provider',
        'we.normalized',
        'ci.settings',
        't.country as tenantCountry',
        't.currency as tenantCurrency',
        trx.raw(
          `(select k.key from (select ${moneyLockKeySql} as key) k, lateral (select pg_advisory_xact_lock(hashtextextended(k.key, 0))) l
             where we.status = 'pending' and we.money_external_id is not null and we.normalized ->> 'kind' in ('payment', 'refund')
               and coalesce(jsonb_array_length(case when jsonb_typeof(we.normalized -> 'related') = 'array' then we.normalized -> 'related' end), 0) = 0
           ) as "lockedMoneyKey"`,
        ),
      ),
  );
  if (!row) return { status: 'skipped', reason: 'missing' };
  if (row.status !== 'pending') return { status: 'skipped', reason: `already ${row.status}` };
  const settings = (row.settings ?? {}) as ConnectorSettings;
  const tenant = { country: row.tenantCountry as string | null, currency: row.tenantCurrency as string | null };
  const result = await runPipeline(trx, {
    tenantId,
    event: row.normalized as NormalizedEvent,
    settings,
    eventRowId,
    tenant,
    lockedMoneyKey: row.lockedMoneyKey,
  });
  await runCompiled(
    trx,
    'webhook-job:finish',
    [eventRowId, tenantId, result.status, result.invoiceId, result.warning?.slice(0, 1000) ?? null],
    (id, tenant, status, invoiceId, error) =>
      trx('webhookEvents').where({ id, tenantId: tenant }).update({ status, invoiceId, error, processedAt: trx.fn.now() }),
  );
  return { status: result.status, invoiceId: result.invoiceId, result, provider: row.provider as string };
}

/** Permanent failure, or retries exhausted: the log row ends failed with the reason. */
export async function markEventFailed(eventRowId: string, tenantId: string, error: string): Promise<void> {
  const rows = await db()('webhookEvents')
    .where({ id: eventRowId, tenantId, status: 'pending' })
    // The reason may quote the event (a currency, an amount): storable, as every text we keep of it.
    .update({ status: 'failed', error: storable(error.slice(0, 1000)), processedAt: db().fn.now() })
    .returning('provider');
  for (const r of rows) recordWebhookOutcome(r.provider, 'failed');
}
