import { invalidInput, unprocessable, type ErrorDetail } from '../errors';
import { compareStatedTax, computeTotals, type InvoiceTotals, type StatedTax } from './invoiceTotals';
import { dec, fmtMoney, fmtRate, isValidQuantity } from './money';
import { normalizeAllowedRate, taxRateMessage } from './taxRates';
import { isCurrency } from './currencies';
import { servicePeriodProblem } from './dates';
import type { InvoiceInput, InvoiceItemInput } from './invoiceInput';
import type { InvoiceStatus, InvoiceType } from './invoiceView';
import {
  checkTaxCategory,
  fittingZeroCategories,
  inferTaxCategory,
  isTaxCountry,
  type LineTaxFacts,
  smallBusinessReason,
  type TaxCategory,
} from './tax/vatCategory';

/** The rules an invoice's content must meet, without the database: create and full update share them. */

export interface PreparedItem {
  description: string;
  unit: string | null;
  taxCategory: TaxCategory | null;
  exemptionReason: string | null;
  exemptionNote: string | null;
  taxCategoryGiven: boolean;
}

export interface PreparedItems {
  items: PreparedItem[];
  totals: InvoiceTotals;
}

/**
 * Who sells to whom, for the VAT category of each line. A sale's seller is the tenant; an
 * incoming invoice's category is the one its supplier's invoice shows, checked against its rate only.
 */
export type ItemTaxContext = Omit<LineTaxFacts, 'taxRate'> & { incoming: boolean };

type CategoryFields = Pick<PreparedItem, 'taxCategory' | 'exemptionReason' | 'taxCategoryGiven'>;

/** The category of one line: the given one checked against the facts, else inferred (null: unclassified 0 %). */
export function lineCategory(it: InvoiceItemInput, rate: string, ctx: ItemTaxContext | undefined, i: number, details: ErrorDetail[]): CategoryFields {
  const given = it.taxCategory ?? null;
  const reason = it.exemptionReason?.trim() || null;
  const field = (f: string) => `items.${i}.${f}`;
  const facts: LineTaxFacts | null = ctx ? { ...ctx, taxRate: rate } : null;
  if (!facts || ctx?.incoming) {
    const positive = dec(rate).greaterThan(0);
    if (given && (given === 'standard') !== positive)
      details.push({
        field: field('taxRate'),
        message: given === 'standard' ? 'must be greater than 0 for taxCategory standard' : `must be 0 for taxCategory ${given}`,
      });
    if (reason && given !== 'exempt') details.push({ field: field('exemptionReason'), message: 'is only allowed with taxCategory exempt' });
    return { taxCategory: given ?? (positive ? 'standard' : null), exemptionReason: given === 'exempt' ? reason : null, taxCategoryGiven: !!given };
  }
  if (facts.smallBusiness && isTaxCountry(facts.sellerCountry)) {
    const own = smallBusinessReason(facts.sellerCountry).code;
    const problem = checkTaxCategory(given ?? 'exempt', reason ?? own, facts);
    if (problem) details.push({ field: field(problem.field), message: problem.message });
    return { taxCategory: 'exempt', exemptionReason: own, taxCategoryGiven: !!given };
  }
  if (given) {
    const problem = checkTaxCategory(given, reason, facts);
    if (problem) details.push({ field: field(problem.field), message: problem.message });
    return { taxCategory: given, exemptionReason: given === 'exempt' ? reason : null, taxCategoryGiven: true };
  }
  if (reason) details.push({ field: field('exemptionReason'), message: 'needs taxCategory exempt' });
  return { taxCategory: inferTaxCategory(facts), exemptionReason: null, taxCategoryGiven: false };
}

/** A foreign VAT rate as stored (numeric(5,2)): above 0 and below 100, at most 2 decimals; else null. */
function foreignRate(rate: unknown): string | null {
  if (typeof rate !== 'string' || !/^\d+(\.\d+)?$/.test(rate.trim())) return null;
  const r = fmtRate(rate.trim());
  const d = dec(r);
  return d.greaterThan(0) && d.lessThan(100) && d.decimalPlaces() <= 2 ? r : null;
}

/**
 * What only the e-invoice import may ask of an incoming invoice (createInvoice's `einvoice`):
 * lines of foreign VAT at their own rate, and the document's stated VAT per rate.
 */
export interface ReceivedInvoiceOptions {
  foreignVat?: boolean;
  statedTax?: StatedTax[];
}

/**
 * Check items against the tenant's tax rates and quantity rules, then compute the totals. With
 * `tax` each line also gets its VAT category (docs/vat-categories.md). `received` is the e-invoice
 * import's: a line of taxCategory foreignVat keeps its foreign rate, and the stated tax of each rate
 * is booked when within BR-CO-17's tolerance (else 400 on `statedTax.<rate>`).
 */
export function prepareItems(items: InvoiceItemInput[] | undefined, country: string, tax?: ItemTaxContext, received?: ReceivedInvoiceOptions): PreparedItems {
  if (!items?.length) throw invalidInput('Invoice failed validation', [{ field: 'items', message: 'must contain at least one item' }]);
  const details: ErrorDetail[] = [];
  const foreign = items.map((it) => it.taxCategory === 'foreignVat');
  const normalized = items.map((it, i) => {
    let rate: string | null;
    if (foreign[i]) {
      if (!received?.foreignVat) details.push({ field: `items.${i}.taxCategory`, message: 'foreignVat is set only by the e-invoice import' });
      rate = foreignRate(it.taxRate);
      if (rate === null) details.push({ field: `items.${i}.taxRate`, message: 'a foreign VAT rate must be above 0 and below 100 with at most 2 decimals' });
    } else {
      rate = typeof it.taxRate === 'string' ? normalizeAllowedRate(it.taxRate, country) : null;
      if (rate === null) details.push({ field: `items.${i}.taxRate`, message: taxRateMessage(country) });
    }
    if (!isValidQuantity(it.quantity)) {
      details.push({ field: `items.${i}.quantity`, message: 'must be greater than 0 with at most 4 decimal places' });
    }
    if (typeof it.description !== 'string' || !it.description.trim()) details.push({ field: `items.${i}.description`, message: 'must not be empty' });
    return { quantity: it.quantity, unitPrice: it.unitPrice, taxRate: rate ?? '0' };
  });
  const categories = items.map(
    (it, i): CategoryFields =>
      foreign[i] ? { taxCategory: 'foreignVat', exemptionReason: null, taxCategoryGiven: true } : lineCategory(it, normalized[i].taxRate, tax, i, details),
  );
  if (details.length) throw invalidInput('Invoice failed validation', details);
  const statedTax = received?.statedTax?.length ? received.statedTax : undefined;
  if (statedTax) {
    const { refused } = compareStatedTax(computeTotals(normalized).taxBreakdown, statedTax);
    if (refused.length) {
      throw invalidInput(
        'Invoice failed validation',
        refused.map((d) => ({
          field: `statedTax.${d.taxRate}`,
          message: `BR-CO-17: the document states VAT ${d.stated} at ${d.taxRate} %, its lines give ${d.computed}: a difference of ${d.difference}, 1.00 or more`,
        })),
      );
    }
  }
  return {
    items: items.map((it, i) => ({
      description: it.description.trim(),
      unit: it.unit?.trim() || null,
      ...categories[i],
      exemptionNote: it.exemptionNote?.trim() || null,
    })),
    totals: computeTotals(normalized, statedTax),
  };
}

/** The client's expected total must match ours to the cent (the spec's "invoice total mismatch"). */
export function checkExpectedTotal(expected: string | null | undefined, computed: string): void {
  if (expected == null) return;
  if (!dec(expected).equals(dec(computed))) {
    throw unprocessable(`Invoice total mismatch: expected ${fmtMoney(expected)}, computed ${computed}`, {
      expected: fmtMoney(expected),
      computed,
    });
  }
}

export function checkNotNegative(totals: InvoiceTotals, allowNegative = false): void {
  if (!allowNegative && dec(totals.totalGross).isNegative()) {
    throw unprocessable(`The invoice total must not be negative (computed ${totals.totalGross}); issue a credit note (gutschrift) instead`, {
      computed: totals.totalGross,
    });
  }
}

const PARTY_FIELDS_OF_INCOMING = ['supplierId', 'invoiceNumber', 'invoiceDate'] as const;

/**
 * Who an invoice of `type` is addressed to: an incoming invoice names its supplier and the
 * supplier's number and date, every other type a customer and none of those.
 */
export function partyFieldDetails(type: InvoiceType, input: InvoiceInput): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  if (type === 'eingangsrechnung') {
    for (const f of PARTY_FIELDS_OF_INCOMING) if (!input[f]) details.push({ field: f, message: 'is required for incoming invoices' });
  } else {
    if (!input.customerId) details.push({ field: 'customerId', message: 'is required' });
    for (const f of PARTY_FIELDS_OF_INCOMING) if (input[f]) details.push({ field: f, message: 'is only allowed on incoming invoices (eingangsrechnung)' });
  }
  return details;
}

/**
 * Field rules that depend on the type, shared by create and full update. On a non-credit note
 * relatedInvoiceId is not the client's to set: convert links the new draft to its quote. A full
 * update passes that stored link as `storedRelatedInvoiceId`, so a client echoing the invoice it
 * read back is accepted (updateInvoice keeps the stored link) and only a different one
 * is refused.
 */
export function typeFieldDetails(type: InvoiceType | undefined, input: InvoiceInput, storedRelatedInvoiceId: string | null = null): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  if (input.detailsMarkdown != null && type !== 'angebot') details.push({ field: 'detailsMarkdown', message: 'is only allowed on quotes (angebot)' });
  if (input.relatedInvoiceId && type !== 'gutschrift' && input.relatedInvoiceId !== storedRelatedInvoiceId) {
    details.push({ field: 'relatedInvoiceId', message: 'is only allowed on credit notes (gutschrift)' });
  }
  if (input.currency && !isCurrency(input.currency)) details.push({ field: 'currency', message: 'must be a supported ISO 4217 currency code' });
  const period = servicePeriodProblem(input.serviceDate, input.serviceEndDate);
  if (period) details.push({ field: 'serviceEndDate', message: period });
  return details;
}

const TYPE_NAMES: Partial<Record<InvoiceType, string>> = {
  angebot: 'a quote (angebot)',
  gutschrift: 'a credit note (gutschrift)',
  eingangsrechnung: 'an incoming invoice (eingangsrechnung)',
};

/** What the rules below need to know of the invoice a credit note refers to. */
export interface RelatedInvoiceFacts {
  type: InvoiceType;
  status: InvoiceStatus;
  customerId: string | null;
  currency: string;
}

/**
 * Why `rel` cannot be the invoice a credit note corrects (empty: it can). The documents print
 * the link as the corrected invoice (§ 11 UStG AT / § 14 UStG DE): a finalized rechnung (storniert
 * counts), same customer and currency. A wrong type is the only problem reported then.
 */
export function relatedInvoiceProblems(
  rel: RelatedInvoiceFacts,
  creditNote: { customerId: string | null | undefined; currency: string | null | undefined },
): string[] {
  if (rel.type !== 'rechnung') return [`must be a sales invoice (rechnung) that the credit note corrects, not ${TYPE_NAMES[rel.type] ?? rel.type}`];
  const problems: string[] = [];
  if (rel.status === 'entwurf') problems.push('must be a finalized (sent) invoice, not a draft: a draft has no number to refer to');
  if (rel.customerId !== (creditNote.customerId ?? null)) problems.push('belongs to another customer: a credit note corrects an invoice to its own customer');
  if (creditNote.currency && rel.currency !== creditNote.currency)
    problems.push(`is in ${rel.currency}, the credit note in ${creditNote.currency}: a credit note corrects an invoice in the same currency`);
  return problems;
}

/** A stored line as sending re-decides its category. */
export interface StoredLineTax {
  position: number;
  description: string;
  taxRate: string;
  taxCategory: TaxCategory | null;
  exemptionReason: string | null;
  taxCategoryGiven: boolean;
}

/**
 * The categories a sales document is finalized with (docs/vat-categories.md, "When"): inferred
 * lines are inferred again from the final facts, given ones checked again (the customer or the
 * settings may have changed since), and a line left without one is refused with the categories
 * that would fit. Returns the lines whose stored category changes.
 */
export function finalLineCategories(lines: readonly StoredLineTax[], ctx: ItemTaxContext): { changed: StoredLineTax[]; details: ErrorDetail[] } {
  const details: ErrorDetail[] = [];
  const changed: StoredLineTax[] = [];
  lines.forEach((line, i) => {
    const input: InvoiceItemInput = {
      description: line.description,
      quantity: 1,
      unitPrice: '0',
      taxRate: line.taxRate,
      taxCategory: line.taxCategoryGiven ? line.taxCategory : null,
      exemptionReason: line.taxCategoryGiven ? line.exemptionReason : null,
    };
    const decided = lineCategory(input, line.taxRate, ctx, i, details);
    if (decided.taxCategory === null) {
      details.push({
        field: `items.${i}.taxCategory`,
        message: `line ${line.position} ("${line.description.slice(0, 60)}") is at 0 % without a VAT situation; set taxCategory to one of: ${fittingZeroCategories({ ...ctx, taxRate: '0' }).join(', ')}`,
      });
    }
    if (decided.taxCategory !== line.taxCategory || decided.exemptionReason !== line.exemptionReason) changed.push({ ...line, ...decided });
  });
  return { changed, details };
}
