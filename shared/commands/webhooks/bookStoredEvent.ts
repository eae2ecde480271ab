import { runCompiled } from '../../db';
import type { ConnectorSettings } from '../../domain/connectorSettings';
import { moneyLockKeySql } from '../../locks';
import { recordWebhookOutcome } from '../../metrics';
import type { WebhookEvent } from '../../models/WebhookEvent';
import { onCommit } from '../../outbox';
import type { CommandContext } from '../types';
import { bookPaymentEvent, type BookingResult } from './bookPaymentEvent';

export interface StoredEventOutcome {
  status: 'processed' | 'duplicate' | 'skipped';
  invoiceId?: string | null;
  reason?: string;
  result?: BookingResult;
  provider?: string;
}

/**
 * The job's work: one stored webhook event (the actor's tenant's) booked in the caller's
 * transaction. The log row is locked first; a row that is no longer pending was finished by an
 * earlier attempt (a retry after a crash between commit and acknowledgement) and is left alone.
 * The row's final status, invoice and processed_at are written in the same transaction as the
 * booking, so a crash anywhere leaves either everything or nothing, and the retry starts from a
 * clean slate. Counted in the metrics once committed, so a rolled-back attempt is not counted twice.
 */
export async function bookStoredEvent(ctx: CommandContext, input: { eventRowId: string }): Promise<StoredEventOutcome> {
  const row = await lockStoredEvent(ctx, input.eventRowId);
  if (!row) return { status: 'skipped', reason: 'missing' };
  if (row.status !== 'pending') return { status: 'skipped', reason: `already ${row.status}` };

  const result = await bookPaymentEvent(ctx, {
    event: row.normalized,
    settings: row.settings ?? {},
    eventRowId: input.eventRowId,
    tenant: { country: row.tenantCountry, currency: row.tenantCurrency },
    lockedMoneyKey: row.lockedMoneyKey,
  });

  await recordOutcome(ctx, input.eventRowId, result);
  onCommit(ctx.trx, () => recordWebhookOutcome(row.provider, result.status));
  return { status: result.status, invoiceId: result.invoiceId, result, provider: row.provider };
}

/** The log row as the job reads it: locked, with what booking it needs from its connector and tenant. */
interface LockedEventRow extends Pick<WebhookEvent, 'status' | 'provider'> {
  /** Every pending row has it (ingest stores only verified events as pending). */
  normalized: NonNullable<WebhookEvent['normalized']>;
  settings: ConnectorSettings | null;
  tenantCountry: string | null;
  tenantCurrency: string | null;
  /** The money movement's advisory lock, when this statement took it (see below). */
  lockedMoneyKey: string | null;
}

/**
 * One statement for the row lock, the connector's settings, the tenant's country and currency
 * (three round trips before) and the money movement's advisory lock (one more). That lock is
 * taken here only for a pending payment or refund without related movements: with related ones
 * (Mollie) booking takes their locks oldest first, and taking the main one before them could
 * deadlock against another event of the same payment. Hot (once per event): compiled SQL
 * (runCompiled) rather than the WebhookEvent model.
 */
async function lockStoredEvent({ trx, actor }: CommandContext, eventRowId: string): Promise<LockedEventRow | undefined> {
  const [row] = await runCompiled<LockedEventRow>(trx, 'webhook-job:event', [eventRowId, actor.tenantId], (id, tenant) =>
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
  return row;
}

/** The booking's final status, invoice and warning on the log row. Hot (once per event): compiled SQL, not the model. */
async function recordOutcome({ trx, actor }: CommandContext, eventRowId: string, result: BookingResult): Promise<void> {
  await runCompiled(
    trx,
    'webhook-job:finish',
    [eventRowId, actor.tenantId, result.status, result.invoiceId, result.warning?.slice(0, 1000) ?? null],
    (id, tenant, status, invoiceId, error) =>
      trx('webhookEvents').where({ id, tenantId: tenant }).update({ status, invoiceId, error, processedAt: trx.fn.now() }),
  );
}
