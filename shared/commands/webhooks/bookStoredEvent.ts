import type { Knex } from 'knex';
import { systemActor } from '../../actor';
import { runCompiled } from '../../db';
import type { ConnectorSettings } from '../../domain/connectorSettings';
import { moneyLockKeySql } from '../../locks';
import { recordWebhookOutcome } from '../../metrics';
import type { WebhookEvent } from '../../models/WebhookEvent';
import { onCommit } from '../../outbox';
import type { CommandContext } from '../types';
import { bookPaymentEvent, type BookingResult } from './bookPaymentEvent';
import { deferOutcome, flushOutcomes } from './outcomes';
import { prefetchSuppliers } from './resolveSupplier';
import { bookPlainPayments, type PlainPayment, plainPayment, postingSettingsKey } from './bookPlainPayments';

export interface StoredEventOutcome {
  /** deferred: not booked, its money movement's lock is held by another transaction (bookStoredEvents' `tryLocks`). */
  status: 'processed' | 'duplicate' | 'skipped' | 'deferred';
  invoiceId?: string | null;
  reason?: string;
  result?: BookingResult;
  provider?: string;
}

/** A stored event to book: its log row, of its tenant. */
export interface StoredEventRef {
  eventRowId: string;
  tenantId: string;
}

/**
 * The job's work: stored webhook events booked in the caller's transaction (a batch, or one), one after the other, each acting for
 * its own tenant as the system. The log rows are locked first, all with one statement; a row that
 * is no longer pending was finished by an earlier attempt (a retry after a crash between commit
 * and acknowledgement) and is left alone. Each row's final status, invoice and processed_at are
 * written in the same transaction as its booking, all with one statement at the end (outcomes.ts;
 * earlier when a check in between reads log rows' statuses), so a crash anywhere leaves either
 * everything or nothing, and the retry starts from a clean slate. Counted in the metrics once
 * committed, so a rolled-back attempt is not counted twice. One outcome per ref, in order; a row
 * named twice is booked once, the second ref sees it finished.
 *
 * `tryLocks` (a batch): a money movement whose lock another transaction holds (the same payment's
 * event in another batch, mostly a redelivery) is not waited for: its event is left out, outcome
 * `deferred`, and the caller books it alone once this transaction is over, where waiting is
 * normal. Before, the batch waited for it until its lock_timeout and rolled back all its events.
 */
export async function bookStoredEvents(
  trx: Knex.Transaction,
  refs: readonly StoredEventRef[],
  opts: { tryLocks?: boolean } = {},
): Promise<StoredEventOutcome[]> {
  const rows = await lockStoredEvents(trx, refs, opts.tryLocks === true);
  // The payers' suppliers of a batch with one statement (without a default supplier, which is
  // read FOR SHARE by its own lookup; a refund's original supplier is found through the payment).
  const payers = [...rows.values()].filter((r) => r.status === 'pending' && !r.settings?.defaultSupplierId && r.normalized.counterparty);
  if (payers.length) {
    await prefetchSuppliers(
      trx,
      payers.map((r) => ({ tenantId: r.tenantId, provider: r.normalized.provider, counterparty: r.normalized.counterparty })),
    );
  }
  const plain = await bookPlainPrefix(trx, refs, rows);
  const outcomes: StoredEventOutcome[] = [];
  const finished = new Map<string, StoredEventOutcome['status']>();
  for (const [i, ref] of refs.entries()) {
    const ctx: CommandContext = { trx, actor: systemActor(ref.tenantId) };
    const row = rows.get(`${ref.eventRowId}:${ref.tenantId}`);
    const status = finished.get(ref.eventRowId) ?? row?.status;
    if (!row) {
      outcomes.push({ status: 'skipped', reason: 'missing' });
      continue;
    }
    if (status !== 'pending') {
      outcomes.push({ status: 'skipped', reason: `already ${status}` });
      continue;
    }
    if (row.moneyBusy) {
      outcomes.push({ status: 'deferred', reason: 'its money movement is locked by another transaction' });
      continue;
    }
    const result =
      plain.get(i) ??
      (await bookPaymentEvent(ctx, {
        event: row.normalized,
        settings: row.settings ?? {},
        eventRowId: ref.eventRowId,
        tenant: { country: row.tenantCountry, currency: row.tenantCurrency },
        lockedMoneyKey: row.lockedMoneyKey,
      }));
    deferOutcome(trx, {
      eventRowId: ref.eventRowId,
      tenantId: ref.tenantId,
      status: result.status,
      invoiceId: result.invoiceId,
      error: result.warning?.slice(0, 1000) ?? null,
    });
    finished.set(ref.eventRowId, result.status);
    onCommit(trx, () => recordWebhookOutcome(row.provider, result.status));
    outcomes.push({ status: result.status, invoiceId: result.invoiceId, result, provider: row.provider });
  }
  await flushOutcomes(trx);
  return outcomes;
}

/**
 * The batch's plain payments (bookPlainPayments.ts) booked together, before any other event: the
 * longest run of the refs from the first that are plain payments or are decided without writing
 * anything (missing, finished, named before, deferred), so every event booked one by one comes
 * after all of them, as in the refs' order, and nothing a plain payment reads can have been
 * written by an event before it. The run also ends at a second event of a money movement (it is
 * booked alone, after, and ends duplicate as always) and at a payment of a supplier whose other
 * payment in the run posts with other settings (postPayments' condition). Fewer than two: none
 * (one is booked alone, as always). The results by the refs' index.
 */
async function bookPlainPrefix(trx: Knex.Transaction, refs: readonly StoredEventRef[], rows: Map<string, LockedEventRow>): Promise<Map<number, BookingResult>> {
  const run = new Map<number, PlainPayment>();
  const named = new Set<string>();
  const movements = new Set<string>();
  const postingOf = new Map<string, string>();
  for (const [i, ref] of refs.entries()) {
    const key = `${ref.eventRowId}:${ref.tenantId}`;
    const row = rows.get(key);
    const seen = named.has(key);
    named.add(key);
    if (row?.status !== 'pending' || seen || row.moneyBusy) continue;
    const p = plainPayment(trx, row);
    if (!p || movements.has(p.moneyKey)) break;
    const supplier = `${p.tenantId}:${p.supplier.supplierId}`;
    if ((postingOf.get(supplier) ?? postingSettingsKey(p)) !== postingSettingsKey(p)) break;
    postingOf.set(supplier, postingSettingsKey(p));
    movements.add(p.moneyKey);
    run.set(i, p);
  }
  if (run.size < 2) return new Map();
  const results = await bookPlainPayments(trx, [...run.values()]);
  return new Map([...run.keys()].map((i, n) => [i, results[n]]));
}

/** A log row as the job reads it: locked, with what booking it needs from its connector and tenant. */
interface LockedEventRow extends Pick<WebhookEvent, 'status' | 'provider'> {
  id: string;
  tenantId: string;
  /** Every pending row has it (ingest stores only verified events as pending). */
  normalized: NonNullable<WebhookEvent['normalized']>;
  settings: ConnectorSettings | null;
  tenantCountry: string | null;
  tenantCurrency: string | null;
  /** The money movement's advisory lock, when this statement took it (see below). */
  lockedMoneyKey: string | null;
  /** With tryLocks: the row needs a money lock that another transaction holds (not taken). */
  moneyBusy: boolean | null;
}

/**
 * One statement for the rows' locks, their connectors' settings, their tenants' country and
 * currency (three round trips per event before) and each money movement's advisory lock (one
 * more). That lock is taken here only for a pending payment or refund without related movements:
 * with related ones (Mollie) booking takes their locks oldest first, and taking the main one
 * before them could deadlock against another event of the same payment. The rows are given as
 * two arrays (ids, tenants), so the text and plan are the same for any number of them. Hot (once
 * per batch): compiled SQL (runCompiled) rather than the WebhookEvent model. By `id:tenantId`.
 * `tryLock`: pg_try_advisory_xact_lock, a money lock held elsewhere is reported (moneyBusy), not waited for.
 */
async function lockStoredEvents(trx: Knex.Transaction, refs: readonly StoredEventRef[], tryLock: boolean): Promise<Map<string, LockedEventRow>> {
  const ids = refs.map((r) => r.eventRowId);
  const tenants = refs.map((r) => r.tenantId);
  // The money key when the row needs the lock; `locked` whether this statement holds it now.
  const moneyLock = tryLock
    ? `select k.key, pg_try_advisory_xact_lock(hashtextextended(k.key, 0)) as locked from (select ${moneyLockKeySql} as key) k`
    : `select k.key, true as locked from (select ${moneyLockKeySql} as key) k, lateral (select pg_advisory_xact_lock(hashtextextended(k.key, 0))) l`;
  const rows = await runCompiled<LockedEventRow>(trx, `webhook-job:events:${tryLock ? 'try' : 'wait'}`, [ids, tenants], (idList, tenantList) =>
    trx('webhookEvents as we')
      .join('tenants as t', 't.id', 'we.tenantId')
      .leftJoin('connectorInstallations as ci', function () {
        this.on('ci.id', '=', 'we.connectorId').andOn('ci.tenantId', '=', 'we.tenantId');
      })
      .whereRaw('(we.id, we.tenant_id) in (select * from unnest(cast(? as uuid[]), cast(? as uuid[])))', [idList, tenantList])
      .forUpdate('we')
      .select(
        'we.id',
        'we.tenantId',
        'we.status',
        'we.provider',
        'we.normalized',
        'ci.settings',
        't.country as tenantCountry',
        't.currency as tenantCurrency',
        trx.raw('case when m.locked then m.key end as "lockedMoneyKey"'),
        trx.raw('(m.key is not null and not m.locked) as "moneyBusy"'),
      )
      .joinRaw(
        `left join lateral (${moneyLock}
            where we.status = 'pending' and we.money_external_id is not null and we.normalized ->> 'kind' in ('payment', 'refund')
              and coalesce(jsonb_array_length(case when jsonb_typeof(we.normalized -> 'related') = 'array' then we.normalized -> 'related' end), 0) = 0
           offset 0) m on true`,
      ),
  );
  return new Map(rows.map((r) => [`${r.id}:${r.tenantId}`, r]));
}
