import type { Knex } from 'knex';
import { systemActor } from '../../actor';
import { isCurrency } from '../../domain/currencies';
import { isValidDate, todayVienna } from '../../domain/dates';
import { dec, fmtMoney } from '../../domain/money';
import type { NormalizedEvent } from '../../providers/payments/types';
import { prepareItems, type PreparedItems } from '../../domain/invoiceChecks';
import { insertInvoiceWithItems, type NewInvoiceColumns } from '../invoices/insertInvoice';
import { totalsColumns } from '../invoices/columns';
import { exchangeRateOn } from '../../queries/exchangeRates';
import { exchangeRateColumns } from '../invoices/exchangeRate';
import { owesPurchaseTax } from '../../ledger/posting';
import { DuplicateInvoiceError, PermanentPipelineError } from './errors';

export interface IncomingInvoiceDraft {
  externalId: string;
  invoiceDate: string;
  /** Signed: negative for refunds. */
  totalGross: string;
  currency: string;
  description: string;
}

/**
 * Check and shape a payment or refund event into the incoming invoice's values. The invoice date
 * is the Vienna business day of the money movement when the provider gives the instant (a
 * payment at 23:30 UTC on 31 Dec is booked on 1 Jan), else the provider's date.
 */
export function draftFromEvent(event: NormalizedEvent): IncomingInvoiceDraft {
  const { externalId, amount, currency } = event;
  if (!externalId || !amount || !currency) throw new PermanentPipelineError(`${event.eventType} has no money movement id, amount or currency`);
  if (!isCurrency(currency)) throw new PermanentPipelineError(`currency ${currency} is not supported`);
  const value = dec(amount);
  // numeric(14,2): a 3-decimal amount (KWD, BHD …) cannot be stored without rounding money away.
  if (value.decimalPlaces() > 2)
    throw new PermanentPipelineError(`amount ${amount} ${currency} has more than 2 decimals and cannot be booked without rounding`);
  if (value.lessThanOrEqualTo(0)) throw new PermanentPipelineError(`amount ${amount} must be positive`);
  const occurred = event.occurredAt ? new Date(event.occurredAt) : null;
  const invoiceDate = occurred && !Number.isNaN(occurred.getTime()) ? todayVienna(occurred) : event.date;
  if (!isValidDate(invoiceDate)) throw new PermanentPipelineError(`${event.eventType} has no valid date`);
  const label = event.kind === 'refund' ? 'Erstattung' : 'Zahlung';
  const base = event.description?.trim() || `${label} ${event.eventType} ${externalId}`;
  const description = [base, event.reference ? `(Ref. ${event.reference})` : null].filter(Boolean).join(' ').slice(0, 1000);
  return {
    externalId,
    invoiceDate,
    totalGross: fmtMoney(event.kind === 'refund' ? value.negated() : value),
    currency,
    description,
  };
}

/**
 * Insert the incoming invoice for a verified payment or refund (pipeline step 4): type
 * eingangsrechnung, status bezahlt, invoiceNumber = externalId = the money movement's id, one
 * item at tax rate 0 and totals from the shared invoice domain. Tax rate 0 on purpose: a
 * provider's payment notice is not an invoice within § 11 UStG / § 14 UStG, so no input tax may
 * be deducted from it; the tenant books input tax from the supplier's real invoice.
 *
 * A payment gets a payment record for its full amount (method = provider slug). A refund is a
 * negative invoice linked to the original (relatedInvoiceId) and has no payment record: payments
 * are positive by constraint, and the refunded money is the movement itself.
 *
 * Throws DuplicateInvoiceError when the unique index refuses the row (nothing written by this
 * function then); a savepoint is needed only to undo what the caller wrote before.
 */
export async function createIncomingInvoiceFromEvent(
  trx: Knex.Transaction,
  args: {
    tenantId: string;
    event: NormalizedEvent;
    draft: IncomingInvoiceDraft;
    supplierId: string;
    relatedInvoiceId: string | null;
    /** The tenant's country when the caller read it already (undefined: looked up here). */
    country?: string | null;
  },
): Promise<{ id: string; totalGross: string; exchangeRate: string | null; noPurchaseTaxLines: boolean }> {
  const { tenantId, event, draft } = args;
  const country = args.country !== undefined ? args.country : (await trx('tenants').where({ id: tenantId }).first('country'))?.country;
  // A foreign-currency movement counts in the reports at the ECB rate of its day when the feed has
  // one; without one it is stored without a rate (a missing rate must not fail the event) and the
  // reports name it until the user gives it one (docs/exchange-rates.md).
  const ecb = draft.currency !== 'EUR' ? await exchangeRateOn(trx, draft.currency, draft.invoiceDate) : null;
  const v = incomingInvoiceValues({ ...args, country: country ?? null, ecb });
  // Invoice, item, payment and audit row in one statement. An existing (source, externalId) is
  // skipped by the unique index without an error, so the caller's transaction stays usable and
  // needs no savepoint when it wrote nothing before (the pipeline with a known supplier).
  let written: Awaited<ReturnType<typeof insertInvoiceWithItems>>;
  try {
    written = await insertInvoiceWithItems(
      trx,
      { ...v.columns, finalizedAt: trx.fn.now() },
      v.prepared,
      { actor: systemActor(tenantId), action: 'invoice.created', data: v.auditData },
      { skipExistingExternalId: true, payment: v.payment ?? undefined },
    );
  } catch (err) {
    const e = err as { code?: string; constraint?: string };
    if (e.code === '23505' && e.constraint === 'invoices_external_unique') throw new DuplicateInvoiceError(event.provider, draft.externalId);
    throw err;
  }
  if (!written) throw new DuplicateInvoiceError(event.provider, draft.externalId);
  return {
    id: written.row.id,
    totalGross: v.prepared.totals.totalGross,
    exchangeRate: ecb?.rate ?? null,
    noPurchaseTaxLines: v.noPurchaseTaxLines,
  };
}

/** What createIncomingInvoiceFromEvent writes, also for the set-wise booking (insertIncomingInvoices.ts): one definition of the row. */
export interface IncomingInvoiceValues {
  /** The invoice's columns but finalizedAt (now, as SQL). */
  columns: NewInvoiceColumns;
  prepared: PreparedItems;
  auditData: Record<string, unknown>;
  /** A payment's payment record; none for a refund. */
  payment: { amount: string; date: string; method: string } | null;
  /** None of its lines owes purchase tax (posting.ts, owesPurchaseTax). */
  noPurchaseTaxLines: boolean;
}

/** The incoming invoice's values for a movement (pure: the tenant's country and the ECB rate given). */
export function incomingInvoiceValues(args: {
  tenantId: string;
  event: NormalizedEvent;
  draft: IncomingInvoiceDraft;
  supplierId: string;
  relatedInvoiceId: string | null;
  country: string | null;
  ecb: { rate: string; date: string } | null;
}): IncomingInvoiceValues {
  const { tenantId, event, draft, ecb } = args;
  const prepared = prepareItems([{ description: draft.description, quantity: '1', unitPrice: draft.totalGross, taxRate: '0' }], args.country ?? 'AT');
  const refund = event.kind === 'refund';
  return {
    columns: {
      tenantId,
      type: 'eingangsrechnung',
      status: 'bezahlt',
      supplierId: args.supplierId,
      currency: draft.currency,
      issueDate: draft.invoiceDate,
      invoiceNumber: draft.externalId,
      invoiceDate: draft.invoiceDate,
      source: event.provider,
      externalId: draft.externalId,
      relatedInvoiceId: args.relatedInvoiceId,
      notes: `Automatisch aus ${event.provider}-Webhook ${event.eventType} (${event.eventId})`.slice(0, 1000),
      amountPaid: refund ? '0.00' : prepared.totals.totalGross,
      ...(ecb ? exchangeRateColumns({ rate: ecb.rate, date: ecb.date, source: 'ecb' }) : {}),
      ...totalsColumns(prepared.totals),
    },
    prepared,
    auditData: {
      type: 'eingangsrechnung',
      source: event.provider,
      externalId: draft.externalId,
      eventId: event.eventId,
      totalGross: prepared.totals.totalGross,
    },
    payment: refund ? null : { amount: prepared.totals.totalGross, date: draft.invoiceDate, method: event.provider },
    noPurchaseTaxLines: prepared.items.every((it) => !owesPurchaseTax(it.taxCategory)),
  };
}
