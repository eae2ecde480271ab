import type { Knex } from 'knex';
import type { NormalizedEvent } from '../../providers/payments/types';
import { WebhookEvent } from '../../models/WebhookEvent';
import { flushOutcomes } from './outcomes';
import type { CommandContext } from '../types';
import { RetryLaterError } from './errors';
import type { SupplierResolution } from './resolveSupplier';

/**
 * Records the other ids a payment is known by (NormalizedEvent.paymentRefs), so that a refund
 * naming only those (Stripe's charge.refunded on current API versions: pi_… / ch_…) finds the
 * payment's invoice. Keyed (tenant, provider, ref, externalId); an existing row is kept. A bulk
 * insert, so knex rather than a model.
 */
export async function recordPaymentRefs(ctx: CommandContext, event: NormalizedEvent): Promise<{ externalId: string; refs: string[] } | null> {
  const found = paymentRefsOf(event);
  if (found) await insertPaymentRefs(ctx.trx, [{ tenantId: ctx.actor.tenantId, event }]);
  return found;
}

/** The references recordPaymentRefs records for an event, or null for none. */
function paymentRefsOf(event: NormalizedEvent): { externalId: string; refs: string[] } | null {
  const pr = event.paymentRefs;
  if (!pr?.externalId || !Array.isArray(pr.refs)) return null;
  const refs = [...new Set(pr.refs.filter((r) => typeof r === 'string' && r && r !== pr.externalId))].slice(0, 20);
  return refs.length ? { externalId: pr.externalId, refs } : null;
}

/** recordPaymentRefs for several events (of any tenants) at once: one statement, none when they name no references (bookPlainPayments). */
export async function insertPaymentRefs(trx: Knex.Transaction, events: readonly { tenantId: string; event: NormalizedEvent }[]): Promise<void> {
  const rows = events.flatMap(({ tenantId, event }) => {
    const found = paymentRefsOf(event);
    return found ? found.refs.map((ref) => ({ tenantId, provider: event.provider, ref, externalId: found.externalId })) : [];
  });
  if (!rows.length) return;
  await trx('providerPaymentRefs').insert(rows).onConflict(['tenantId', 'provider', 'ref', 'externalId']).ignore();
}

export interface RefundedPayment {
  /** The refunded payment's invoice, which the refund's invoice links (relatedInvoiceId). */
  invoiceId: string | null;
  /** That invoice's supplier while it is not deleted: a refund books on it, whatever the refund names. */
  supplier: SupplierResolution | null;
  /** Why there is no link, for the invoice step. */
  note: string;
}

export const NOT_A_REFUND: RefundedPayment = { invoiceId: null, supplier: null, note: '' };

/**
 * The payment a refund refunds: by the externalId the refund names, else through the recorded
 * references of the ids it names (originalRefs; the named externalId too, which is how events
 * stored before references existed still link). A reference that points at more than one payment
 * links nothing: reversing the wrong entry is worse than an unlinked refund. Throws
 * RetryLaterError while an event that would tell is still pending. Nothing for a payment, or a
 * refund that names nothing.
 */
export async function findRefundedPayment(
  { trx, actor }: CommandContext,
  event: NormalizedEvent,
  booking: {
    /** The log row being booked: the ordering checks wait for other rows only, and not at all without one (test-webhook). */
    eventRowId?: string | null;
    /** Movements this event booked before its main one, in this transaction: not waited for. */
    bookedAlongside?: readonly string[];
  },
): Promise<RefundedPayment> {
  if (event.kind !== 'refund' || !(event.originalExternalId || event.originalRefs?.length)) return NOT_A_REFUND;
  const tenantId = actor.tenantId;
  const eventRowId = booking.eventRowId ?? null;
  const bookedAlongside = booking.bookedAlongside ?? [];
  const direct = event.originalExternalId ?? null;
  const refs = [...new Set([...(event.originalRefs ?? []), ...(direct ? [direct] : [])])].filter((r) => typeof r === 'string' && r);

  // Ordering: the refund may overtake its payment, or the event that names the payment's other
  // ids (Stripe's invoice_payment.paid). Each "still pending?" question is asked BEFORE reading
  // what that event would write: an event's writes and its final status commit together, so in
  // this order we either see it pending (retry later) or see its writes — the other order could
  // miss both when it commits between the two reads.
  const awaited = (ids: string[]) => ids.filter((id) => !bookedAlongside.includes(id));
  const stillPending = async (ids: string[], byRefs: string[]) => {
    const moneyIds = awaited(ids);
    const refIds = awaited(byRefs);
    if (!eventRowId || (!moneyIds.length && !refIds.length)) return;
    // Events booked before this one in the transaction (a batch) are not pending any more.
    await flushOutcomes(trx);
    const waiting = await WebhookEvent.query(trx)
      .where({ tenantId, provider: event.provider, status: 'pending' })
      .whereNot({ id: eventRowId })
      .where((q) => {
        if (moneyIds.length) q.whereIn('moneyExternalId', moneyIds);
        if (refIds.length) q.orWhereRaw("(normalized -> 'paymentRefs' -> 'refs') \\?| ?::text[]", [refIds]);
      })
      .select('id')
      .limit(1)
      .first();
    if (waiting) throw new RetryLaterError(`the original payment ${moneyIds[0] ?? refIds[0]} is still being processed (log entry ${waiting.id})`);
  };
  await stillPending(direct ? [direct] : [], refs);
  const refRows: { externalId: string }[] = refs.length
    ? await trx('providerPaymentRefs').where({ tenantId, provider: event.provider }).whereIn('ref', refs).select('externalId')
    : [];
  const mapped = [...new Set(refRows.map((r) => r.externalId))];
  // The payments the references led to may themselves still be pending.
  await stillPending(
    mapped.filter((id) => id !== direct),
    [],
  );
  const candidates = [...new Set([...(direct ? [direct] : []), ...mapped])];

  const rows: PaymentInvoice[] = candidates.length
    ? await trx('invoices as i')
        .leftJoin('suppliers as s', 's.id', 'i.supplierId')
        .where({ 'i.tenantId': tenantId, 'i.source': event.provider })
        .whereIn('i.externalId', candidates)
        .select('i.id', 'i.externalId', 'i.supplierId', 's.name', 's.deletedAt')
    : [];
  const byExternalId = (id: string) => rows.find((r) => r.externalId === id) ?? null;
  if (direct && byExternalId(direct)) return linkedTo(byExternalId(direct)!);
  const viaRefs = mapped.filter((id) => id !== direct);
  if (viaRefs.length > 1) return { ...NOT_A_REFUND, note: `original ambiguous (${refs.join(', ')} name ${viaRefs.join(', ')}): not linked` };
  const found = viaRefs.length === 1 ? byExternalId(viaRefs[0]) : null;
  if (found) return linkedTo(found);
  return { ...NOT_A_REFUND, note: `original ${viaRefs[0] ?? direct ?? refs.join(' / ')} not found` };
}

/** A candidate payment's invoice with its supplier's name and deletion (the invoice read joins them). */
interface PaymentInvoice {
  id: string;
  externalId: string;
  supplierId: string | null;
  name: string;
  deletedAt: Date | null;
}

function linkedTo(invoice: PaymentInvoice): RefundedPayment {
  const supplier: SupplierResolution | null =
    invoice.supplierId && !invoice.deletedAt ? { supplierId: invoice.supplierId, name: invoice.name, how: 'original' } : null;
  return { invoiceId: invoice.id, supplier, note: '' };
}
