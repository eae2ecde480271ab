import type { Knex } from 'knex';
import { systemActor } from '../../actor';
import type { ConnectorSettings } from '../../domain/connectorSettings';
import { invoiceCreatedEvent } from '../../domain/outboundWebhooks';
import { postPayments } from '../../ledger/postPayments';
import { moneyLockKey } from '../../locks';
import type { NormalizedEvent } from '../../providers/payments/types';
import { loadInvoiceView } from '../../queries/invoices';
import { emitEvent, emitPaymentEvents } from '../outboundWebhooks/emitEvent';
import type { CommandContext } from '../types';
import { type AutoPostOutcome, autoPost, postedOutcome, postingDescription } from './autoPost';
import { type BookingResult, bookingResult, createdMovement, duplicateMovement } from './bookPaymentEvent';
import { draftFromEvent, type IncomingInvoiceDraft, type IncomingInvoiceValues, incomingInvoiceValues } from './createIncomingInvoiceFromEvent';
import { existingIncomingInvoices, insertIncomingInvoices, invoiceKey } from './insertIncomingInvoices';
import { insertPaymentRefs, NOT_A_REFUND } from './refundedPayment';
import { prefetchedSupplier, type SupplierResolution } from './resolveSupplier';

/**
 * A plain payment of a batch: booked with the batch's other plain payments, set-wise
 * (bookPlainPayments), because the one-by-one path would run no statement for it but its invoice
 * insert and its posting. What makes it plain is exactly what lets that path skip the rest: a
 * payment (no refund to look up), no related movements (Mollie), its money lock taken with the
 * batch's first read (lockStoredEvents), its supplier found by that batch's prefetch (no default
 * supplier, none to create), in EUR with a EUR ledger (no ECB rate to read, nothing to convert),
 * and no line owing purchase tax (nothing to read back when posting).
 */
export interface PlainPayment {
  tenantId: string;
  event: NormalizedEvent;
  settings: ConnectorSettings;
  draft: IncomingInvoiceDraft;
  supplier: SupplierResolution;
  values: IncomingInvoiceValues;
  moneyKey: string;
}

/** A pending log row as bookStoredEvents read it, for plainPayment. */
export interface PendingEventRow {
  tenantId: string;
  normalized: NormalizedEvent;
  settings: ConnectorSettings | null;
  tenantCountry: string | null;
  tenantCurrency: string | null;
  lockedMoneyKey: string | null;
}

/** The row as a plain payment, or null when it must be booked alone (bookPaymentEvent). Pure but for the prefetch's cache. */
export function plainPayment(trx: Knex.Transaction, row: PendingEventRow): PlainPayment | null {
  const event = row.normalized;
  const settings = row.settings ?? {};
  const noRelated = event.related == null || (Array.isArray(event.related) && event.related.length === 0);
  if (event.kind !== 'payment' || !noRelated || settings.defaultSupplierId || !row.lockedMoneyKey) return null;
  try {
    const draft = draftFromEvent(event);
    const moneyKey = moneyLockKey(row.tenantId, event.provider, draft.externalId);
    if (moneyKey !== row.lockedMoneyKey || draft.currency !== 'EUR' || (row.tenantCurrency ?? 'EUR') !== 'EUR') return null;
    const supplier = prefetchedSupplier(trx, row.tenantId, event.provider, event.counterparty ?? {});
    if (!supplier) return null;
    const values = incomingInvoiceValues({
      tenantId: row.tenantId,
      event,
      draft,
      supplierId: supplier.supplierId,
      relatedInvoiceId: null,
      country: row.tenantCountry,
      ecb: null,
    });
    if (!values.noPurchaseTaxLines) return null;
    return { tenantId: row.tenantId, event, settings, draft, supplier, values, moneyKey };
  } catch {
    // Refused values (PermanentPipelineError and the like): the one-by-one path refuses them as always.
    return null;
  }
}

/** What decides a plain payment's expense account besides its supplier: rows of one supplier must agree on it (postPayments). */
export const postingSettingsKey = (p: PlainPayment): string => `${p.settings.autoPost ? 1 : 0}:${p.settings.expenseAccount || ''}`;

/**
 * Book plain payments together, each as bookPaymentEvent books it, in the order given: their
 * payment references with one statement (none when they name none), their invoices, items,
 * payment records and audit rows with one (insertIncomingInvoices: the unique index decides a
 * duplicate per row, as for one), the existing invoices of the duplicates with one, the outbound
 * events as the one-by-one path emits them (per invoice: created, paid, payment recorded; no
 * statement for a tenant without subscriptions), then the postings of those whose connector
 * auto-posts with one (postPayments). A posting that statement leaves out (no chart yet, an account
 * missing) is tried alone afterwards (autoPost), which seeds the chart or reports the account as
 * always. The caller guarantees distinct money movements and, per supplier, one posting setting.
 */
export async function bookPlainPayments(trx: Knex.Transaction, payments: readonly PlainPayment[]): Promise<BookingResult[]> {
  await insertPaymentRefs(trx, payments);
  const created = await insertIncomingInvoices(
    trx,
    payments.map((p) => ({ values: p.values, actor: systemActor(p.tenantId) })),
  );
  const keyOf = (p: PlainPayment) => invoiceKey(p.tenantId, p.event.provider, p.draft.externalId);
  const duplicates = payments.filter((p) => !created.has(keyOf(p)));
  const existing = await existingIncomingInvoices(
    trx,
    duplicates.map((p) => ({ tenantId: p.tenantId, source: p.event.provider, externalId: p.draft.externalId })),
  );

  for (const p of payments) {
    const invoiceId = created.get(keyOf(p));
    if (!invoiceId) continue;
    const ctx: CommandContext = { trx, actor: systemActor(p.tenantId) };
    await emitEvent(ctx, invoiceCreatedEvent('eingangsrechnung'), () => loadInvoiceView(trx, p.tenantId, invoiceId));
    await emitPaymentEvents(ctx, invoiceId, 'bezahlt', { invoiceId });
  }

  const toPost = payments.filter((p) => created.has(keyOf(p)) && p.settings.autoPost);
  const entries = await postPayments(
    trx,
    toPost.map((p) => ({
      tenantId: p.tenantId,
      supplierId: p.supplier.supplierId,
      invoiceId: created.get(keyOf(p))!,
      invoiceDate: p.draft.invoiceDate,
      totalGross: p.values.prepared.totals.totalGross,
      provider: p.event.provider,
      settings: p.settings,
      description: postingDescription(p.event, p.draft, p.supplier),
    })),
  );
  const posted = new Map<PlainPayment, AutoPostOutcome>();
  for (const [i, p] of toPost.entries()) {
    const entry = entries[i];
    if (entry) posted.set(p, postedOutcome(entry, 'EUR', null));
  }
  // Left out by the statement, or not auto-posted: alone, in order, exactly as the one-by-one path
  // posts them (autoPost runs no statement for a connector that does not auto-post).
  for (const p of payments) {
    if (!created.has(keyOf(p)) || posted.has(p)) continue;
    const ctx: CommandContext = { trx, actor: systemActor(p.tenantId) };
    posted.set(
      p,
      await autoPost(ctx, {
        event: p.event,
        draft: p.draft,
        settings: p.settings,
        ledgerCurrency: 'EUR',
        supplier: p.supplier,
        invoice: bookedInvoice(p, created.get(keyOf(p))!),
        relatedInvoiceId: null,
      }),
    );
  }

  return payments.map((p) => {
    const invoiceId = created.get(keyOf(p));
    if (!invoiceId) return bookingResult(duplicateMovement(p.event, p.draft, existing.get(keyOf(p)) ?? null), []);
    return bookingResult(createdMovement(p.event, p.draft, p.supplier, bookedInvoice(p, invoiceId), NOT_A_REFUND, posted.get(p)!), []);
  });
}

const bookedInvoice = (p: PlainPayment, id: string) => ({ id, totalGross: p.values.prepared.totals.totalGross, exchangeRate: null, noPurchaseTaxLines: true });
