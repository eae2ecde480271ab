import type { PartialModelObject } from 'objection';
import { audit } from '../audit';
import { immutable, invalidInput, type ErrorDetail } from '../errors';
import { assertTransition } from '../domain/invoiceStates';
import { fmtMoney, fmtQuantity, fmtRate } from '../domain/money';
import type { InvoiceInput, InvoiceItemInput } from '../domain/invoiceInput';
import { checkExpectedTotal, checkNotNegative, partyFieldDetails, prepareItems, typeFieldDetails } from '../domain/invoiceChecks';
import type { CommandContext } from './types';
import { Customer } from '../models/Customer';
import { Invoice } from '../models/Invoice';
import { lockInvoice } from './invoices/locking';
import { activeCustomer, activeSupplier, assertRelatedInvoice, loadTenant } from './invoices/references';
import { contentColumns, totalsColumns } from './invoices/columns';
import { itemTaxContext } from './invoices/taxContext';
import { replaceItems } from './invoices/items';
import { exchangeRateColumns, manualExchangeRate } from './invoices/exchangeRate';
import { fmtExchangeRate, isExchangeRate } from '../domain/exchangeRates';

/** Fields a finalized invoice still accepts (GoBD / BAO: the document content is frozen). */
export const META_FIELDS = ['notes', 'footerText', 'customFields'] as const;

const normItems = (items: Array<Pick<InvoiceItemInput, 'description' | 'unit' | 'quantity' | 'unitPrice' | 'taxRate'>>) =>
  JSON.stringify(items.map((i) => [String(i.description).trim(), i.unit?.trim() || null, fmtQuantity(i.quantity), fmtMoney(i.unitPrice), fmtRate(i.taxRate)]));

/**
 * An incoming invoice in another currency booked without a rate (an e-invoice or a webhook's of a
 * day the ECB feed had none) gets its rate once, as the reports ask (422 FOREIGN_CURRENCY): that
 * fills a gap, it changes nothing converted before (docs/exchange-rates.md). A stored rate stays frozen.
 */
const givesMissingRate = (row: Invoice, input: InvoiceInput) =>
  row.type === 'eingangsrechnung' && row.currency !== 'EUR' && row.exchangeRate == null && 'exchangeRate' in input;

/** Names of content fields in `input` whose value differs from the stored invoice. */
async function changedContentFields(trx: CommandContext['trx'], row: Invoice, input: InvoiceInput): Promise<string[]> {
  const changed: string[] = [];
  const simple: Array<[keyof InvoiceInput, unknown]> = [
    ['type', row.type],
    ['customerId', row.customerId],
    ['supplierId', row.supplierId],
    ['paymentTermDays', row.paymentTermDays],
    ['issueDate', row.issueDate],
    ['serviceDate', row.serviceDate],
    ['serviceEndDate', row.serviceEndDate],
    ['buyerReference', row.buyerReference],
    ['orderReference', row.orderReference],
    ['currency', row.currency],
    ['detailsMarkdown', row.detailsMarkdown],
    ['invoiceNumber', row.invoiceNumber],
    ['invoiceDate', row.invoiceDate],
    ['relatedInvoiceId', row.relatedInvoiceId],
  ];
  for (const [field, current] of simple) {
    if (field in input && (input[field] ?? null) !== (current ?? null)) changed.push(field);
  }
  if ('exchangeRate' in input && !(givesMissingRate(row, input) && input.exchangeRate)) {
    // The rate is frozen with the document: a finalized invoice's rate (ECB or manual) cannot be replaced.
    const given = input.exchangeRate;
    const same =
      given == null
        ? row.exchangeRate == null
        : row.exchangeRateSource === given.source &&
          row.exchangeRateDate === given.date &&
          row.exchangeRate != null &&
          isExchangeRate(given.rate) &&
          fmtExchangeRate(given.rate) === fmtExchangeRate(row.exchangeRate);
    if (!same) changed.push('exchangeRate');
  }
  if ('items' in input) {
    const stored = await row.$relatedQuery('items', trx).where({ tenantId: row.tenantId }).orderBy('position');
    let same = false;
    try {
      same = normItems(input.items ?? []) === normItems(stored);
    } catch {
      same = false;
    }
    if (!same) changed.push('items');
  }
  return changed;
}

/**
 * PUT /api/invoices/:id. A draft is replaced in full (absent optional fields are cleared, the
 * issue date is kept unless given). A finalized invoice (offen, teilbezahlt, bezahlt) accepts
 * only notes, footerText and customFields; any other field that differs from the stored value is
 * 400 IMMUTABLE naming the fields (sending an unchanged value back is fine). storniert: IMMUTABLE.
 */
export async function updateInvoice({ trx, actor }: CommandContext, id: string, input: InvoiceInput): Promise<{ id: string }> {
  const tenantId = actor.tenantId;
  const row = await lockInvoice(trx, tenantId, id);

  if (row.status !== 'entwurf') {
    assertTransition(row.status, 'updateMeta', { type: row.type });
    const changed = await changedContentFields(trx, row, input);
    if (changed.length) {
      throw immutable(
        `Invoice ${row.number ?? row.invoiceNumber ?? row.id} is finalized (${row.status}); only ${META_FIELDS.join(', ')} can change. Refused: ${changed.join(', ')}`,
      );
    }
    checkExpectedTotal(input.expectedTotalGross, fmtMoney(row.totalGross));
    const patch: Pick<PartialModelObject<Invoice>, (typeof META_FIELDS)[number] | 'exchangeRate' | 'exchangeRateDate' | 'exchangeRateSource'> = {};
    if ('notes' in input) patch.notes = input.notes ?? null;
    if ('footerText' in input) patch.footerText = input.footerText ?? null;
    if ('customFields' in input) patch.customFields = input.customFields ?? {};
    if (givesMissingRate(row, input) && input.exchangeRate) Object.assign(patch, exchangeRateColumns(manualExchangeRate(row.currency, input)));
    if (Object.keys(patch).length) {
      await Invoice.query(trx)
        .where({ tenantId, id })
        .patch({ ...patch, version: trx.raw('version + 1'), updatedAt: trx.fn.now() });
      await audit(trx, actor, { action: 'invoice.updated', entityType: 'invoice', entityId: id, data: { fields: Object.keys(patch) } });
    }
    return { id };
  }

  assertTransition(row.status, 'update', { type: row.type });
  const type = row.type;
  const details: ErrorDetail[] = [];
  if (input.type && input.type !== type) details.push({ field: 'type', message: `cannot change the type of an invoice (is ${type})` });
  details.push(...partyFieldDetails(type, input));
  if (!input.items) details.push({ field: 'items', message: 'is required' });
  details.push(...typeFieldDetails(type, input, row.relatedInvoiceId ?? null));
  if (details.length) throw invalidInput('Invoice failed validation', details);

  const tenant = await loadTenant(trx, tenantId);
  // Re-pointing a draft to another customer needs an active one; keeping a since-deleted one is allowed until send.
  const customer =
    input.customerId && input.customerId !== row.customerId
      ? await activeCustomer(trx, tenantId, input.customerId)
      : input.customerId
        ? await Customer.query(trx).where({ tenantId, id: input.customerId }).first()
        : null;
  if (input.supplierId && input.supplierId !== row.supplierId) await activeSupplier(trx, tenantId, input.supplierId);
  // A credit note's link is part of its content (full replace); any other type keeps the link
  // the system set (convert: → the quote), whether the client omits it, sends null or echoes it.
  const isCreditNote = type === 'gutschrift';
  const relatedInvoiceId = isCreditNote ? (input.relatedInvoiceId ?? null) : (row.relatedInvoiceId ?? null);
  const currency = input.currency ?? customer?.currency ?? row.currency;
  // Full replace: a manual rate the input omits is cleared; send looks up the ECB rate then.
  const exchangeRate = manualExchangeRate(currency, input);
  if (isCreditNote) await assertRelatedInvoice(trx, tenantId, relatedInvoiceId, { customerId: input.customerId ?? null, currency });
  const prepared = prepareItems(input.items, tenant.country, itemTaxContext(tenant, customer, type === 'eingangsrechnung'));
  checkNotNegative(prepared.totals);
  checkExpectedTotal(input.expectedTotalGross, prepared.totals.totalGross);

  await Invoice.query(trx)
    .where({ tenantId, id })
    .patch({
      customerId: input.customerId ?? null,
      ...contentColumns(input),
      relatedInvoiceId,
      currency,
      ...exchangeRateColumns(exchangeRate),
      issueDate: input.issueDate ?? row.issueDate,
      ...totalsColumns(prepared.totals),
      version: trx.raw('version + 1'),
      updatedAt: trx.fn.now(),
    });
  await replaceItems(trx, tenantId, id, prepared);
  await audit(trx, actor, {
    action: 'invoice.updated',
    entityType: 'invoice',
    entityId: id,
    data: { fullReplace: true, totalGross: prepared.totals.totalGross },
  });
  return { id };
}
