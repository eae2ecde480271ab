/**
 * The bridge between our invoice view and the e-invoice syntaxes (CII and ebInterface):
 * `toEInvoiceModel` decides what both writers must agree on (exportability, credit-note signs,
 * VAT categories, addresses, unit codes; docs/e-invoicing.md), the writers only serialise.
 * Amounts are taken as stored (what the customer saw on the PDF), never recomputed; the EN 16931
 * checker verifies that they reconcile.
 */
import Decimal from 'decimal.js';
import { toEur } from '../../domain/exchangeRates';
import type { DocumentInput, InvoiceView, PartyView } from '../../domain/invoiceView';
import { stripInvalidXmlChars } from '../xml';
import { servicePeriodProblem } from '../../domain/dates';
import { isIsoCountry, normalizeVatId, vatIdCountry } from './countries';
import { EInvoiceExportError } from './exportError';
import type { EInvoiceLine, EInvoiceModel, EInvoiceParty, EInvoiceTaxGroup } from './einvoiceModelTypes';
import { parsePostalAddress } from './postalAddress';
import { peppolIdFromVatId } from '../../domain/peppolId';
import { unitCode } from './unitCodes';
import { groupReason, isIntraEuReverseCharge, type LineVat, lineVat, reverseChargeNote, sumDecimals, type VatCategory, vatCategoryFor } from './vatCategories';

// Re-exported because code outside shared/formats (commands, documents, workers) and the tests
// import them from here; writers inside shared/formats import the defining modules directly.
export { EInvoiceExportError, isIntraEuReverseCharge, parsePostalAddress, unitCode, vatCategoryFor };

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

function parseDate(value: string | null | undefined, field: string): string | null {
  if (value === null || value === undefined || value === '') return null;
  const d = value.slice(0, 10);
  const parsed = new Date(`${d}T00:00:00Z`);
  if (!DATE_RE.test(d) || Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== d) {
    throw new EInvoiceExportError(`${field} is not a valid date: ${JSON.stringify(value)}`);
  }
  return d;
}

/** The service period (serviceDate … serviceEndDate), when the invoice has an end date. */
function servicePeriodOf(invoice: Pick<InvoiceView, 'serviceDate' | 'serviceEndDate'>): { start: string; end: string } | null {
  const end = parseDate(invoice.serviceEndDate, 'serviceEndDate');
  if (!end) return null;
  const start = parseDate(invoice.serviceDate, 'serviceDate');
  const problem = servicePeriodProblem(start, end);
  if (problem || !start) throw new EInvoiceExportError(`The service period ${start ?? '(no start)'} – ${end} is not a period: serviceEndDate ${problem}`);
  return { start, end };
}

function dec(value: string | number | null | undefined, field: string): Decimal {
  if (value === null || value === undefined || String(value).trim() === '') {
    throw new EInvoiceExportError(`${field} is missing`);
  }
  const text = String(value).trim();
  // Plain decimal notation only: decimal.js would also accept "1e3", "0x10" or "Infinity".
  if (!/^[+-]?\d+(\.\d+)?$/.test(text)) {
    throw new EInvoiceExportError(`${field} is not a decimal number: ${JSON.stringify(value)}`);
  }
  return new Decimal(text);
}

/** Avoids "-0.00" after negating zero amounts. */
function neg(d: Decimal): Decimal {
  return d.isZero() ? new Decimal(0) : d.negated();
}

/** Trimmed text without characters XML cannot carry; null when nothing is left. */
function blankToNull(v: string | null | undefined): string | null {
  if (v === null || v === undefined) return null;
  const t = stripInvalidXmlChars(String(v)).trim();
  return t === '' ? null : t;
}

function party(p: PartyView, fallbackCountry: string, extra: { taxNumber?: string | null } = {}): EInvoiceParty {
  const company = blankToNull(p.company);
  const person = blankToNull(p.name);
  const name = company ?? person;
  if (!name) throw new EInvoiceExportError('A party of the invoice has no name');
  return {
    name,
    contactName: company && person && person !== company ? person : null,
    email: blankToNull(p.email),
    phone: blankToNull(p.phone),
    vatId: normalizeVatId(p.vatId),
    taxNumber: blankToNull(extra.taxNumber),
    address: parsePostalAddress(p.address, {
      country: p.country,
      vatId: p.vatId,
      fallbackCountry,
      partyNames: [company, person],
    }),
    // BT-34 / BT-49: the stored Peppol id, else the one the VAT ID gives (9914 AT, 9930 DE).
    electronicAddress: p.peppolId ?? peppolIdFromVatId(p.vatId),
  };
}

/** The seller with its e-invoice contact (BT-41/42/43) from the settings, where they are set. */
function sellerParty(seller: DocumentInput['seller'], country: string): EInvoiceParty {
  const p = party(seller, country, { taxNumber: seller.taxNumber });
  return {
    ...p,
    contactName: blankToNull(seller.contactName) ?? p.contactName,
    phone: blankToNull(seller.contactPhone) ?? p.phone,
    email: blankToNull(seller.contactEmail) ?? p.email,
  };
}

function splitDescription(text: string): { name: string; description: string | null } {
  const full = text.trim();
  const firstLine = full.split(/\r?\n|\r/)[0].trim();
  const name = firstLine.length > 200 ? `${firstLine.slice(0, 197)}...` : firstLine;
  return { name, description: name === full ? null : full };
}

const EXPORTABLE: ReadonlySet<InvoiceView['type']> = new Set(['rechnung', 'gutschrift']);

/** Checks that the document may be exported at all; throws EInvoiceExportError otherwise. */
export function assertExportable(invoice: InvoiceView): asserts invoice is InvoiceView & { number: string } {
  if (!EXPORTABLE.has(invoice.type)) {
    throw new EInvoiceExportError(`Only sales invoices (rechnung) and credit notes (gutschrift) can be exported as e-invoices, not "${invoice.type}"`);
  }
  if (invoice.status === 'entwurf' || !blankToNull(invoice.number)) {
    throw new EInvoiceExportError('A draft cannot be exported as an e-invoice; finalize (send) it first');
  }
  if (!invoice.customer) throw new EInvoiceExportError('The invoice has no customer; an e-invoice needs a buyer');
  if (invoice.items.length === 0) throw new EInvoiceExportError('The invoice has no items');
}

/**
 * Normalises a DocumentInput for the e-invoice writers. EN 16931 and ebInterface (CreditMemo)
 * expect positive credit-note amounts, so a stored negative reversal is negated; a negative unit
 * price becomes a positive price with a negative quantity (BR-27: no negative item net price).
 */
export function toEInvoiceModel(input: DocumentInput): EInvoiceModel {
  const { invoice, seller } = input;
  assertExportable(invoice);
  const customer = invoice.customer!;

  const sellerCountry = (seller.country || '').toUpperCase();
  if (!isIsoCountry(sellerCountry)) throw new EInvoiceExportError(`Seller country is not an ISO code: ${JSON.stringify(seller.country)}`);
  const currency = (invoice.currency || '').toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) throw new EInvoiceExportError(`Currency is not an ISO 4217 code: ${JSON.stringify(invoice.currency)}`);

  const kind = invoice.type === 'gutschrift' ? 'creditNote' : 'invoice';
  const totalGross = dec(invoice.totalGross, 'totalGross');
  const flip = kind === 'creditNote' && totalGross.isNegative() && !totalGross.isZero();
  const sign = (d: Decimal) => (flip ? neg(d) : d);

  const reverseCharge = isIntraEuReverseCharge(seller, customer);
  const vats: LineVat[] = [];

  const lines: EInvoiceLine[] = [...invoice.items]
    .sort((a, b) => a.position - b.position)
    .map((item, index) => {
      const f = `items[${index}]`;
      const rate = dec(item.taxRate, `${f}.taxRate`);
      const vat = lineVat(item, rate, reverseCharge, sellerCountry);
      vats.push(vat);
      const net = sign(dec(item.netAmount, `${f}.netAmount`));
      const price = dec(item.unitPrice, `${f}.unitPrice`).abs();
      const qtyAbs = dec(item.quantity, `${f}.quantity`).abs();
      // Direction of the line lives in the quantity: price stays >= 0 (BR-27).
      const quantity = net.isNegative() && !net.isZero() ? neg(qtyAbs) : qtyAbs;
      const description = blankToNull(item.description);
      if (!description) throw new EInvoiceExportError(`${f}.description is empty; every line needs an item name (BR-25)`);
      const { name, description: longText } = splitDescription(description);
      return {
        position: Number.isInteger(item.position) && item.position > 0 ? item.position : index + 1,
        name,
        description: longText,
        fullDescription: description,
        quantity,
        unitCode: unitCode(item.unit),
        unitPrice: price,
        netAmount: net,
        taxRate: rate,
        category: vat.code,
        taxCategory: vat.category,
        vatReason: [vat.reason, vat.note].filter(Boolean).join(' ') || null,
      };
    });

  // One group per breakdown row (rate) and category: the stored row's amounts when the rate has
  // one category (what the customer saw), the lines' sums when a 0 % row splits into categories.
  const taxGroups: EInvoiceTaxGroup[] = invoice.taxBreakdown.flatMap((g, i) => {
    const rate = dec(g.taxRate, `taxBreakdown[${i}].taxRate`);
    const atRate = lines.map((l, j) => ({ l, vat: vats[j] })).filter(({ l }) => l.taxRate.equals(rate));
    const codes = [...new Set(atRate.map(({ l }) => l.category))];
    const group = (category: VatCategory, basis: Decimal, tax: Decimal): EInvoiceTaxGroup => {
      const { reason, vatex } = groupReason(atRate.filter(({ l }) => l.category === category).map(({ vat }) => vat));
      // Standard and zero-rated groups carry no exemption reason (BR-S-10, BR-Z-10).
      const none = category === 'S' || category === 'Z';
      return { category, rate, basis, tax, exemptionReason: none ? null : reason, exemptionReasonCode: none ? null : vatex };
    };
    if (codes.length <= 1) {
      return [group(codes[0] ?? vatCategoryFor(rate, reverseCharge), sign(dec(g.net, `taxBreakdown[${i}].net`)), sign(dec(g.tax, `taxBreakdown[${i}].tax`)))];
    }
    if (rate.greaterThan(0)) throw new EInvoiceExportError(`The ${rate.toString()} % lines name different VAT categories; only standard lines carry a rate`);
    return codes.map((c) => group(c, sumDecimals(atRate.filter(({ l }) => l.category === c).map(({ l }) => l.netAmount)), new Decimal(0)));
  });
  // EN 16931 cannot mix "not subject to VAT" with anything else (BR-O-11/12): such an invoice
  // exists as a PDF only.
  if (taxGroups.some((g) => g.category === 'O') && taxGroups.some((g) => g.category !== 'O')) {
    throw new EInvoiceExportError(
      '[BR-O-11] An e-invoice with lines not subject to VAT (notSubject) cannot contain other VAT categories; issue them on separate invoices',
    );
  }

  const notes: string[] = [];
  const n = blankToNull(invoice.notes);
  if (n) notes.push(n);
  const footer = blankToNull(invoice.footerText);
  if (footer) notes.push(footer);
  const usesReverseCharge = lines.some((l) => l.category === 'AE');
  if (usesReverseCharge) notes.push(reverseChargeNote(vatIdCountry(seller.vatId) ?? sellerCountry));
  // The statutory wording of the stored categories (the PDF prints the same, legalNotes.ts).
  for (const vat of vats) {
    for (const text of [vat.category && vat.category !== 'reverseCharge' ? vat.reason : null, vat.note]) {
      if (text && !notes.includes(text)) notes.push(text);
    }
  }

  const issueDate = parseDate(invoice.issueDate, 'issueDate');
  if (!issueDate) throw new EInvoiceExportError('issueDate is missing');

  return {
    kind,
    number: blankToNull(invoice.number)!,
    issueDate,
    deliveryDate: parseDate(invoice.serviceDate, 'serviceDate') ?? issueDate,
    servicePeriod: servicePeriodOf(invoice),
    dueDate: parseDate(invoice.dueDate, 'dueDate'),
    paymentTermDays: invoice.paymentTermDays ?? null,
    currency,
    seller: sellerParty(seller, sellerCountry),
    buyer: party(customer, sellerCountry),
    buyerId: customer.id ?? null,
    buyerReference: blankToNull(invoice.buyerReference) ?? blankToNull(customer.buyerReference),
    orderReference: blankToNull(invoice.orderReference),
    lines,
    taxGroups,
    totals: {
      net: sign(dec(invoice.totalNet, 'totalNet')),
      tax: sign(dec(invoice.totalTax, 'totalTax')),
      gross: sign(totalGross),
      paid: sign(dec(invoice.amountPaid ?? '0', 'amountPaid')),
      due: sign(dec(invoice.amountDue, 'amountDue')),
    },
    reverseCharge: usesReverseCharge,
    taxCurrency:
      currency !== 'EUR' && invoice.exchangeRate
        ? {
            code: 'EUR',
            taxTotal: sign(dec(toEur(dec(invoice.totalTax, 'totalTax'), invoice.exchangeRate.rate), 'exchangeRate.rate')),
            rate: invoice.exchangeRate.rate,
            date: invoice.exchangeRate.date,
            source: invoice.exchangeRate.source,
          }
        : null,
    deliverToCountry: lines.some((l) => l.category === 'K') ? party(customer, sellerCountry).address.country : null,
    notes,
    relatedInvoiceNumber: kind === 'creditNote' ? blankToNull(invoice.relatedInvoiceNumber) : null,
    iban: seller.iban ? seller.iban.replace(/\s+/g, '').toUpperCase() || null : null,
    bic: seller.bic ? seller.bic.replace(/\s+/g, '').toUpperCase() || null : null,
  };
}

/** BT-20, the payment terms in words, as both syntaxes write them. */
export function paymentTermsText(m: EInvoiceModel): string {
  if (m.kind === 'creditNote') return 'Gutschrift: der Betrag wird erstattet oder verrechnet.';
  if (!m.totals.due.greaterThan(0)) return 'Bereits vollständig bezahlt.';
  if (m.dueDate) return `Zahlbar ohne Abzug bis ${formatDateDe(m.dueDate)}.`;
  if (m.paymentTermDays !== null) return `Zahlbar ohne Abzug innerhalb von ${m.paymentTermDays} Tagen.`;
  return 'Zahlbar sofort ohne Abzug.';
}

function formatDateDe(isoDate: string): string {
  const [y, m, d] = isoDate.split('-');
  return `${d}.${m}.${y}`;
}
