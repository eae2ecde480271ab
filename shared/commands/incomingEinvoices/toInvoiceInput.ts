import type { InboundAllowanceCharge, InboundInvoice, InboundLine } from '../../formats/inbound/types';
import type { InvoiceInput, InvoiceItemInput } from '../../domain/invoiceInput';
import type { TaxCategory } from '../../domain/tax/vatCategory';
import type { StatedTax } from '../../domain/invoiceTotals';
import { dec, fmtMoney, fmtRate, isValidQuantity, roundMoney } from '../../domain/money';
import { normalizeAllowedRate } from '../../domain/taxRates';
import { vatIdCountry } from '../../domain/vatId';

/**
 * How a read e-invoice becomes the input of createInvoice (an eingangsrechnung). Pure: the
 * supplier is matched and the totals are compared by the import command.
 */

/** UNTDID 5305 → our categories (docs/vat-categories.md). L and M (Canary Islands, Ceuta/Melilla) have none. */
const CATEGORY_OF: Record<string, TaxCategory> = {
  S: 'standard',
  Z: 'zeroRated',
  E: 'exempt',
  AE: 'reverseCharge',
  K: 'intraCommunitySupply',
  G: 'export',
  O: 'notSubject',
};

export class UnmappableInvoice extends Error {
  constructor(
    readonly rule: string,
    message: string,
  ) {
    super(message);
  }
}

function category(code: string | null, where: string): TaxCategory | null {
  if (code == null) return null;
  const c = CATEGORY_OF[code.toUpperCase()];
  if (!c) throw new UnmappableInvoice('VAT-CATEGORY', `${where}: VAT category ${code} has no equivalent in this service`);
  return c;
}

const sign = (v: string, negate: boolean) => fmtMoney(negate ? dec(v).negated() : dec(v));

/**
 * A line keeps its quantity and net price when they reproduce its net amount (BT-131) to the
 * cent; otherwise (price per base quantity, line allowances, a negative or finer quantity) it
 * becomes quantity 1 at its net amount, so the totals stay those of the document.
 */
function item(line: InboundLine, i: number, negate: boolean): InvoiceItemInput {
  const rate = line.vatRate ?? '0';
  const taxCategory = category(line.vatCategory, `line ${i + 1}`);
  const description = line.name?.trim() || `Position ${i + 1}`;
  const price = line.netPrice;
  const keepsQuantity =
    price != null &&
    isValidQuantity(line.quantity) &&
    dec(price).equals(dec(fmtMoney(price))) &&
    roundMoney(dec(line.quantity).times(dec(price))).equals(dec(line.netAmount));
  if (keepsQuantity) {
    return { description, quantity: line.quantity, unit: line.unitCode, unitPrice: sign(price, negate), taxRate: rate, taxCategory };
  }
  const note = price != null ? ` (${line.quantity}${line.unitCode ? ` ${line.unitCode}` : ''} × ${price})` : '';
  return { description: `${description}${note}`, quantity: '1', unit: null, unitPrice: sign(line.netAmount, negate), taxRate: rate, taxCategory };
}

function allowanceOrCharge(a: InboundAllowanceCharge, kind: 'allowance' | 'charge', i: number, negate: boolean): InvoiceItemInput {
  const amount = kind === 'allowance' ? dec(a.amount).negated() : dec(a.amount);
  return {
    description: a.reason?.trim() || (kind === 'allowance' ? 'Nachlass' : 'Zuschlag'),
    quantity: '1',
    unit: null,
    unitPrice: sign(fmtMoney(amount), negate),
    taxRate: a.vatRate ?? '0',
    taxCategory: category(a.vatCategory, `${kind} ${i + 1}`),
  };
}

/** Days from the invoice date to the due date (BT-9), when it is not before the invoice date. */
function termDays(issueDate: string, dueDate: string | null): number | null {
  if (!dueDate) return null;
  const days = Math.round((Date.parse(`${dueDate}T00:00:00Z`) - Date.parse(`${issueDate}T00:00:00Z`)) / 86_400_000);
  return days >= 0 ? days : null;
}

/** The seller's country: its VAT ID's prefix (EL → GR), else its address's country; null when neither says. */
export function sellerCountry(invoice: InboundInvoice): string | null {
  const byVatId = invoice.seller.vatId ? vatIdCountry(invoice.seller.vatId) : null;
  const byAddress = invoice.seller.address.country?.trim().toUpperCase();
  return byVatId ?? (byAddress && /^[A-Z]{2}$/.test(byAddress) ? byAddress : null);
}

/**
 * Foreign VAT (docs/vat-categories.md, "Foreign VAT"): a standard-rated line whose rate is not one
 * of the tenant country's, or any standard-rated line of a seller in another country. Its VAT is
 * not input tax of our return; the line keeps its rate as category foreignVat.
 */
function markForeignVat(items: InvoiceItemInput[], tenantCountry: string, seller: string | null): string[] {
  const rates = new Set<string>();
  for (const it of items) {
    const positive = dec(it.taxRate).greaterThan(0);
    if (!positive || (it.taxCategory != null && it.taxCategory !== 'standard')) continue;
    if (normalizeAllowedRate(it.taxRate, tenantCountry) === null || (seller != null && seller !== tenantCountry.toUpperCase())) {
      it.taxCategory = 'foreignVat';
      rates.add(fmtRate(it.taxRate));
    }
  }
  return [...rates].sort((a, b) => dec(a).comparedTo(dec(b)));
}

export interface MappedInvoice {
  input: InvoiceInput;
  negate: boolean;
  /** BT-117 per rate (summed over the categories of a rate), signed as booked. */
  statedTax: StatedTax[];
  /** The rates booked as foreign VAT (empty: none) and the seller's country. */
  foreignVat: { rates: string[]; sellerCountry: string | null };
}

/**
 * The createInvoice input for a read invoice from `supplierId`, received by a tenant in
 * `tenantCountry`. A credit note (BT-3 381 …) is booked with negative amounts: its document states
 * them positive. Document-level allowances and charges (BG-20/21) become lines of their own so the
 * totals are the document's. A profile without lines (Factur-X MINIMUM, BASIC WL) is booked as one
 * line per VAT breakdown.
 */
export function toInvoiceInput(invoice: InboundInvoice, supplierId: string, tenantCountry: string): MappedInvoice {
  const negate = invoice.kind === 'creditNote';
  const items: InvoiceItemInput[] = invoice.lines.length
    ? [
        ...invoice.lines.map((l, i) => item(l, i, negate)),
        ...invoice.allowances.map((a, i) => allowanceOrCharge(a, 'allowance', i, negate)),
        ...invoice.charges.map((c, i) => allowanceOrCharge(c, 'charge', i, negate)),
      ]
    : invoice.vatBreakdown.map((b, i) => ({
        description: `Summe ${b.rate ?? '0'} % laut Rechnung`,
        quantity: '1',
        unit: null,
        unitPrice: sign(b.basis, negate),
        taxRate: b.rate ?? '0',
        taxCategory: category(b.category, `VAT breakdown ${i + 1}`),
      }));
  const notes = [
    negate ? `Gutschrift${invoice.precedingInvoiceNumber ? ` zu Rechnung ${invoice.precedingInvoiceNumber}` : ''}` : null,
    !negate && invoice.precedingInvoiceNumber ? `Bezieht sich auf Rechnung ${invoice.precedingInvoiceNumber}` : null,
  ].filter(Boolean);
  const seller = sellerCountry(invoice);
  const foreignRates = markForeignVat(items, tenantCountry, seller);
  const statedTax = invoice.vatBreakdown.map((b) => ({ taxRate: b.rate ?? '0', tax: sign(b.tax, negate) }));
  return {
    negate,
    statedTax,
    foreignVat: { rates: foreignRates, sellerCountry: seller },
    input: {
      type: 'eingangsrechnung',
      supplierId,
      invoiceNumber: invoice.number,
      invoiceDate: invoice.issueDate,
      currency: invoice.currency,
      paymentTermDays: termDays(invoice.issueDate, invoice.dueDate),
      notes: notes.length ? notes.join('\n') : null,
      source: 'einvoice',
      items,
    },
  };
}
