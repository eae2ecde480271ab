import { viewOfCreated } from '../queries/invoices';
import type { InvoiceView } from '../domain/invoiceView';
import { invalidInput, type ErrorDetail } from '../errors';
import { addDays, todayVienna } from '../domain/dates';
import type { Actor } from '../actor';
import { isTransaction, type Db } from '../db';
import { runInTransaction } from '../outbox';
import { invoiceCreatedEvent } from '../domain/outboundWebhooks';
import type { InvoiceInput } from '../domain/invoiceInput';
import { checkExpectedTotal, checkNotNegative, partyFieldDetails, prepareItems, type ReceivedInvoiceOptions, typeFieldDetails } from '../domain/invoiceChecks';
import type { StatedTaxDifference } from '../domain/invoiceTotals';
import { activeSupplier, assertRelatedIncomingInvoice, assertRelatedInvoice, loadTenantAndCustomer } from './invoices/references';
import { contentColumns, totalsColumns } from './invoices/columns';
import { insertInvoiceWithItems, type NewInvoiceColumns } from './invoices/insertInvoice';
import { itemTaxContext } from './invoices/taxContext';
import { ecbExchangeRate, exchangeRateColumns, manualExchangeRate } from './invoices/exchangeRate';
import { exchangeRateOn } from '../queries/exchangeRates';

/**
 * Create an invoice. rechnung, angebot and gutschrift start as drafts (entwurf) without a number;
 * eingangsrechnung (an incoming invoice entered by hand or by the webhook pipeline) is the
 * supplier's finalized document: it starts offen and keeps the supplier's number.
 * A document in another currency than EUR may carry a manual exchange rate; an incoming one
 * without it gets the ECB rate of its invoice date (docs/exchange-rates.md).
 * The hot write path: the invoice, its items and its audit row are one hand-written statement
 * typed by the Invoice model but building no model instance (docs/data-layer.md).
 *
 * `einvoice` is the e-invoice import's alone (never the API's: no route passes it) and only for an
 * eingangsrechnung: lines of foreign VAT, the document's stated VAT per rate, booking without an
 * exchange rate when the ECB feed has none (the reports ask for it, 422 FOREIGN_CURRENCY), and the
 * link of a credit note to the supplier's invoice it corrects (docs/e-invoicing-inbound.md).
 */
export interface ReceivedEinvoiceOptions extends ReceivedInvoiceOptions {
  withoutEcbRate?: boolean;
  relatedInvoiceId?: string | null;
}

export async function createInvoice(
  { trx, actor }: { trx: Db; actor: Actor },
  input: InvoiceInput,
  opts: { allowNegative?: boolean; einvoice?: ReceivedEinvoiceOptions } = {},
): Promise<{ id: string; view: InvoiceView; statedTaxApplied: StatedTaxDifference[] }> {
  const received = opts.einvoice;
  if (received && input.type !== 'eingangsrechnung') throw new Error('createInvoice: the e-invoice options are for incoming invoices only');
  // Given no transaction (db()), an invoice to a customer is two statements on their own: the
  // reads, then one insert that re-checks and locks the customer (insertInvoiceWithItems). A
  // supplier or related invoice is checked by statements of its own, so those run in a transaction,
  // and so does an invoice whose event a webhook subscription wants (written with it: emitEvent;
  // the reads say whether one does, and the create starts over in a transaction if so).
  const pooled = !isTransaction(trx);
  if (pooled && (input.supplierId || input.relatedInvoiceId || received?.relatedInvoiceId)) {
    return runInTransaction((t) => createInvoice({ trx: t, actor }, input, opts));
  }
  const tenantId = actor.tenantId;
  const type = input.type;
  const details: ErrorDetail[] = [];
  if (!type) details.push({ field: 'type', message: 'is required' });
  else details.push(...partyFieldDetails(type, input));
  if (type === 'eingangsrechnung' && input.customerId) details.push({ field: 'customerId', message: 'is not allowed on incoming invoices (use supplierId)' });
  details.push(...typeFieldDetails(type, input));
  if (details.length) throw invalidInput('Invoice failed validation', details);

  const { tenant, customer, subscribed } = await loadTenantAndCustomer(trx, tenantId, input.customerId, pooled ? invoiceCreatedEvent(type) : undefined);
  if (subscribed) return runInTransaction((t) => createInvoice({ trx: t, actor }, input, opts));
  if (input.supplierId) await activeSupplier(trx, tenantId, input.supplierId);
  const currency = input.currency ?? customer?.currency ?? tenant.currency ?? 'EUR';
  const relatedInvoice = received?.relatedInvoiceId
    ? await assertRelatedIncomingInvoice(trx, tenantId, received.relatedInvoiceId, { supplierId: input.supplierId })
    : await assertRelatedInvoice(trx, tenantId, input.relatedInvoiceId, { customerId: customer?.id ?? null, currency });

  const prepared = prepareItems(input.items, tenant.country, itemTaxContext(tenant, customer, type === 'eingangsrechnung'), received);
  checkNotNegative(prepared.totals, opts.allowNegative);
  checkExpectedTotal(input.expectedTotalGross, prepared.totals.totalGross);

  const incoming = type === 'eingangsrechnung';
  const issueDate = input.issueDate ?? (incoming ? input.invoiceDate! : todayVienna());
  // An incoming invoice is final when entered: without a manual rate it takes the ECB rate of the
  // supplier's invoice date now. A sales draft keeps a manual rate only; send looks up the ECB's.
  let exchangeRate = manualExchangeRate(currency, input);
  if (!exchangeRate && incoming && currency !== 'EUR') {
    const date = input.invoiceDate ?? issueDate;
    if (received?.withoutEcbRate) {
      // Booked without: the reports refuse its period (422 FOREIGN_CURRENCY) until it has one.
      const ecb = await exchangeRateOn(trx, currency, date);
      exchangeRate = ecb ? { rate: ecb.rate, date: ecb.date, source: 'ecb' } : null;
    } else {
      exchangeRate = await ecbExchangeRate(trx, currency, date, 'the invoice date');
    }
  }
  const columns: NewInvoiceColumns = {
    tenantId,
    type,
    status: incoming ? 'offen' : 'entwurf',
    customerId: customer?.id ?? null,
    ...contentColumns(input),
    ...(received?.relatedInvoiceId ? { relatedInvoiceId: relatedInvoice!.id } : {}),
    currency,
    ...exchangeRateColumns(exchangeRate),
    issueDate,
    dueDate: incoming && input.paymentTermDays != null ? addDays(issueDate, input.paymentTermDays) : null,
    source: input.source ?? null,
    externalId: input.externalId ?? null,
    finalizedAt: incoming ? trx.fn.now() : null,
    createdBy: actor.userId,
    ...totalsColumns(prepared.totals),
  };
  const { row, items } = (await insertInvoiceWithItems(
    trx,
    columns,
    prepared,
    { actor, action: 'invoice.created', data: { type, totalGross: prepared.totals.totalGross } },
    { customerId: customer?.id ?? null },
  ))!; // null only with skipExistingExternalId
  const view = viewOfCreated(row, {
    tenantCountry: tenant.country ?? null,
    items,
    customers: customer ? [customer] : [],
    payments: [],
    related: relatedInvoice ? [relatedInvoice] : [],
    deliveries: [],
  });
  return { id: row.id, view, statedTaxApplied: prepared.totals.statedTaxApplied ?? [] };
}
