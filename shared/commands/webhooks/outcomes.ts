import type { Knex } from 'knex';
import { runCompiledSql } from '../../db';

/** A booked event's final state on its log row, not yet written. */
export interface EventOutcome {
  eventRowId: string;
  tenantId: string;
  status: 'processed' | 'duplicate';
  invoiceId: string | null;
  error: string | null;
}

const deferredByTrx = new WeakMap<Knex.Transaction, EventOutcome[]>();

/**
 * Keep a booked event's final status for the transaction's next flush (flushOutcomes) instead of
 * writing it at once: a batch of events writes all of theirs with one statement (a round trip per
 * event saved, docs/webhooks.md "Batches"). Whoever books must flush before its transaction
 * commits (bookStoredEvents does), and every read of log rows' statuses in the transaction must
 * flush first, so it sees the events booked before it as finished, exactly as if each had written
 * its own: the ordering check for a refund (refundedPayment.ts) and a non-booking event's
 * duplicate check (bookPaymentEvent.ts).
 */
export function deferOutcome(trx: Knex.Transaction, outcome: EventOutcome): void {
  const list = deferredByTrx.get(trx);
  if (list) list.push(outcome);
  else deferredByTrx.set(trx, [outcome]);
}

/**
 * Write the deferred outcomes of this transaction: one UPDATE for all of them, the rows as one
 * jsonb array, so the statement's text and plan are the same for any number. A no-op when none
 * wait (test-webhook, or nothing booked since the last flush). Hot (once per batch): compiled SQL.
 * The ids also go as an array, so the rows are found by primary key: the planner takes any
 * function's rows for 100, and against a table of a few thousand rows it hashed them and read
 * the whole table on every flush (1.9 ms per flush at 6,000 rows, growing with the table; 0.3 ms now).
 */
export async function flushOutcomes(trx: Knex.Transaction): Promise<void> {
  const list = deferredByTrx.get(trx);
  if (!list?.length) return;
  deferredByTrx.delete(trx);
  const rows = list.map((o) => ({ id: o.eventRowId, tenant_id: o.tenantId, status: o.status, invoice_id: o.invoiceId, error: o.error }));
  await runCompiledSql(
    trx,
    `update webhook_events we
        set status = v.status, invoice_id = v.invoice_id, error = v.error, processed_at = current_timestamp
       from jsonb_to_recordset(cast(? as jsonb)) as v(id uuid, tenant_id uuid, status text, invoice_id uuid, error text)
      where we.id = any(cast(? as uuid[])) and we.id = v.id and we.tenant_id = v.tenant_id`,
    [JSON.stringify(rows), rows.map((r) => r.id)],
  );
}
