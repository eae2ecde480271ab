/**
 * The bridge between our invoice view and the e-invoice syntaxes (CII and ebInterface):
 * `toEInvoiceModel` decides what both writers must agree on (exportability, credit-note signs,
 * VAT categories, addresses, unit codes; docs/e-invoicing.md), the writers only serialise.
 * Amounts are taken as stored (what the customer saw on the PDF), never recomputed; the EN 16931
 * checker verifies that they reconcile.
 */
import Decimal from 'decimal.js';
import type { DocumentInput, InvoiceView, PartyView, SellerView } from '../../domain/invoiceView';
import { stripInvalidXmlChars } from '../xml';
import { servicePeriodProblem } from '../../domain/dates';

/** Thrown when an invoice cannot (or must not) be exported as an e-invoice. */
export class EInvoiceExportError extends Error {
  constructor(
    message: string,
    /** EN 16931 / ebInterface rule violations, when the refusal comes from a rule check. */
    public readonly violations: ReadonlyArray<{ rule: string; message: string }> = [],
  ) {
    super(message);
    this.name = 'EInvoiceExportError';
  }
}

// --- countries --------------------------------------------------------------------------------

/** EU member states by the country code used in VAT identifiers ("EL" is Greece). */
export const EU_VAT_PREFIXES: ReadonlySet<string> = new Set([
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'EL',
  'ES',
  'FI',
  'FR',
  'HR',
  'HU',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
]);

/** German display names (ebInterface wants a country name next to the code). */
const COUNTRY_NAMES_DE: Record<string, string> = {
  AT: 'Österreich',
  DE: 'Deutschland',
  CH: 'Schweiz',
  LI: 'Liechtenstein',
  IT: 'Italien',
  FR: 'Frankreich',
  NL: 'Niederlande',
  BE: 'Belgien',
  LU: 'Luxemburg',
  CZ: 'Tschechien',
  SK: 'Slowakei',
  HU: 'Ungarn',
  SI: 'Slowenien',
  PL: 'Polen',
  ES: 'Spanien',
  PT: 'Portugal',
  DK: 'Dänemark',
  SE: 'Schweden',
  FI: 'Finnland',
  IE: 'Irland',
  GR: 'Griechenland',
  HR: 'Kroatien',
  RO: 'Rumänien',
  BG: 'Bulgarien',
  EE: 'Estland',
  LV: 'Lettland',
  LT: 'Litauen',
  MT: 'Malta',
  CY: 'Zypern',
  GB: 'Vereinigtes Königreich',
  NO: 'Norwegen',
  US: 'Vereinigte Staaten',
};

/** Country names and abbreviations recognised at the end of a free-form address. */
const COUNTRY_ALIASES: Record<string, string> = {
  österreich: 'AT',
  oesterreich: 'AT',
  austria: 'AT',
  deutschland: 'DE',
  germany: 'DE',
  brd: 'DE',
  schweiz: 'CH',
  switzerland: 'CH',
  suisse: 'CH',
  svizzera: 'CH',
  liechtenstein: 'LI',
  italien: 'IT',
  italy: 'IT',
  italia: 'IT',
  frankreich: 'FR',
  france: 'FR',
  niederlande: 'NL',
  netherlands: 'NL',
  nederland: 'NL',
  belgien: 'BE',
  belgium: 'BE',
  luxemburg: 'LU',
  luxembourg: 'LU',
  tschechien: 'CZ',
  czechia: 'CZ',
  'czech republic': 'CZ',
  slowakei: 'SK',
  slovakia: 'SK',
  ungarn: 'HU',
  hungary: 'HU',
  slowenien: 'SI',
  slovenia: 'SI',
  polen: 'PL',
  poland: 'PL',
  spanien: 'ES',
  spain: 'ES',
  dänemark: 'DK',
  denmark: 'DK',
  schweden: 'SE',
  sweden: 'SE',
  kroatien: 'HR',
  croatia: 'HR',
  'united kingdom': 'GB',
  'vereinigtes königreich': 'GB',
};

/** Old licence-plate style prefixes in front of postcodes ("A-1010 Wien", "D-80331 München"). */
const POSTCODE_PREFIXES: Record<string, string> = {
  A: 'AT',
  D: 'DE',
  I: 'IT',
  F: 'FR',
  B: 'BE',
  L: 'LU',
  H: 'HU',
  FL: 'LI',
  CH: 'CH',
  AT: 'AT',
  DE: 'DE',
  IT: 'IT',
  FR: 'FR',
  BE: 'BE',
  LU: 'LU',
  HU: 'HU',
  LI: 'LI',
  CZ: 'CZ',
  SK: 'SK',
  SI: 'SI',
  NL: 'NL',
  PL: 'PL',
  DK: 'DK',
};

export function countryNameDe(code: string): string {
  return COUNTRY_NAMES_DE[code] ?? code;
}

/** "ATU 123-456.78" → "ATU12345678". */
export function normalizeVatId(vatId: string | null | undefined): string | null {
  if (!vatId) return null;
  const v = vatId.replace(/[\s.\-/]/g, '').toUpperCase();
  return v === '' ? null : v;
}

/** ISO country of a VAT id; the Greek "EL" prefix maps to "GR". */
export function vatIdCountry(vatId: string | null | undefined): string | null {
  const v = normalizeVatId(vatId);
  if (!v || !/^[A-Z]{2}/.test(v)) return null;
  const prefix = v.slice(0, 2);
  return prefix === 'EL' ? 'GR' : prefix;
}

function isIsoCountry(code: string | null | undefined): code is string {
  return !!code && /^[A-Z]{2}$/.test(code);
}

// --- postal address -----------------------------------------------------------------------------

export interface PostalAddress {
  /** Street line first (BT-35), then additional lines such as "c/o" (BT-36, BT-162). */
  lines: string[];
  postcode: string | null;
  city: string | null;
  country: string;
}

const POSTCODE_LINE_RE = /^(?:([A-Za-z]{1,2})\s*[-–]\s*)?(\d{4,5})\s+(\S.*)$/;

/**
 * Parses the free-form address we store (lines separated by "\n" or ", "): a trailing country
 * line, the last "[A-|D-|CH-]PLZ Ort" line as postcode and city, the line before it as street.
 * Country precedence: party country, address, VAT id prefix, then the fallback (the seller's:
 * domestic customers are the common case). Rules: docs/e-invoicing.md, "Parties and addresses".
 */
export function parsePostalAddress(
  raw: string | null | undefined,
  opts: { country?: string | null; vatId?: string | null; fallbackCountry: string; partyNames?: Array<string | null | undefined> },
): PostalAddress {
  let lines = stripInvalidXmlChars(raw ?? '')
    .split(/\r?\n|\r|,/)
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter((l) => l !== '');

  let addressCountry: string | null = null;
  const last = lines[lines.length - 1];
  if (last !== undefined) {
    const alias = COUNTRY_ALIASES[last.toLowerCase()];
    if (alias) addressCountry = alias;
    else if (/^[A-Z]{2}$/.test(last) && lines.length > 1) addressCountry = last;
    if (addressCountry) lines = lines.slice(0, -1);
  }

  const names = (opts.partyNames ?? []).filter((n): n is string => !!n).map((n) => n.trim().toLowerCase());
  if (lines.length > 1 && names.includes(lines[0].toLowerCase())) lines = lines.slice(1);

  let postcode: string | null = null;
  let city: string | null = null;
  let zipIndex = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = POSTCODE_LINE_RE.exec(lines[i]);
    if (m) {
      zipIndex = i;
      postcode = m[2];
      city = m[3].trim();
      const prefix = m[1]?.toUpperCase();
      if (prefix && POSTCODE_PREFIXES[prefix] && !addressCountry) addressCountry = POSTCODE_PREFIXES[prefix];
      break;
    }
  }

  let addressLines: string[];
  if (zipIndex >= 0) {
    const before = lines.slice(0, zipIndex);
    const after = lines.slice(zipIndex + 1);
    const street = before.length > 0 ? before[before.length - 1] : null;
    addressLines = [...(street ? [street] : []), ...before.slice(0, -1), ...after];
  } else {
    addressLines = lines;
  }

  const explicit = opts.country?.trim().toUpperCase();
  const country = isIsoCountry(explicit) ? explicit : (addressCountry ?? vatIdCountry(opts.vatId) ?? opts.fallbackCountry.toUpperCase());
  return { lines: addressLines, postcode, city, country };
}

// --- units --------------------------------------------------------------------------------------

/** UN/ECE Recommendation 20 codes we emit (also accepted verbatim as input). */
export const KNOWN_UNIT_CODES: ReadonlySet<string> = new Set([
  'H87',
  'C62',
  'HUR',
  'DAY',
  'KMT',
  'KGM',
  'LS',
  'MTR',
  'MTK',
  'MTQ',
  'LTR',
  'TNE',
  'GRM',
  'MIN',
  'SEC',
  'MON',
  'WEE',
  'ANN',
  'XPK',
  'SET',
  'PR',
]);

const UNIT_ALIASES: Record<string, string> = {
  stk: 'H87',
  'stk.': 'H87',
  stück: 'H87',
  stueck: 'H87',
  st: 'H87',
  'st.': 'H87',
  pcs: 'H87',
  pc: 'H87',
  piece: 'H87',
  pieces: 'H87',
  std: 'HUR',
  'std.': 'HUR',
  h: 'HUR',
  stunde: 'HUR',
  stunden: 'HUR',
  hour: 'HUR',
  hours: 'HUR',
  hr: 'HUR',
  hrs: 'HUR',
  tag: 'DAY',
  tage: 'DAY',
  day: 'DAY',
  days: 'DAY',
  pt: 'DAY',
  personentag: 'DAY',
  personentage: 'DAY',
  km: 'KMT',
  kg: 'KGM',
  g: 'GRM',
  t: 'TNE',
  tonne: 'TNE',
  tonnen: 'TNE',
  pauschal: 'LS',
  pauschale: 'LS',
  psch: 'LS',
  'psch.': 'LS',
  'pausch.': 'LS',
  'lump sum': 'LS',
  flat: 'LS',
  m: 'MTR',
  meter: 'MTR',
  lfm: 'MTR',
  m2: 'MTK',
  'm²': 'MTK',
  qm: 'MTK',
  m3: 'MTQ',
  'm³': 'MTQ',
  cbm: 'MTQ',
  l: 'LTR',
  liter: 'LTR',
  ltr: 'LTR',
  min: 'MIN',
  minute: 'MIN',
  minuten: 'MIN',
  monat: 'MON',
  monate: 'MON',
  'mon.': 'MON',
  month: 'MON',
  months: 'MON',
  woche: 'WEE',
  wochen: 'WEE',
  week: 'WEE',
  weeks: 'WEE',
  jahr: 'ANN',
  jahre: 'ANN',
  year: 'ANN',
  years: 'ANN',
  paket: 'XPK',
  pkt: 'XPK',
  set: 'SET',
  paar: 'PR',
};

/** Maps our free-text unit to a UN/ECE Rec 20 code; unknown or empty units become C62 ("one"). */
export function unitCode(unit: string | null | undefined): string {
  if (!unit) return 'C62';
  const trimmed = unit.trim();
  if (KNOWN_UNIT_CODES.has(trimmed)) return trimmed;
  return UNIT_ALIASES[trimmed.toLowerCase().replace(/\s+/g, ' ')] ?? 'C62';
}

// --- VAT categories -----------------------------------------------------------------------------

export type VatCategory = 'S' | 'Z' | 'AE';

export const REVERSE_CHARGE_REASON = 'Reverse charge';
export const REVERSE_CHARGE_REASON_CODE = 'VATEX-EU-AE';

/**
 * Intra-EU B2B reverse charge applies when the buyer has a VAT id of an EU member state other
 * than the seller's (seller country from its VAT id, else the tenant country). Only rate-0
 * lines are reverse-charged; a positive rate stays "S" (the seller charged domestic VAT).
 */
export function isIntraEuReverseCharge(seller: SellerView, buyer: PartyView | null): boolean {
  const buyerVat = normalizeVatId(buyer?.vatId);
  if (!buyerVat || !EU_VAT_PREFIXES.has(buyerVat.slice(0, 2))) return false;
  const sellerCountry = vatIdCountry(seller.vatId) ?? seller.country.toUpperCase();
  return vatIdCountry(buyerVat) !== sellerCountry;
}

/** S for any positive rate, AE for 0 % under intra-EU reverse charge, otherwise Z. */
export function vatCategoryFor(rate: Decimal, reverseCharge: boolean): VatCategory {
  if (rate.isNegative() && !rate.isZero()) throw new EInvoiceExportError(`Negative VAT rate ${rate.toString()} cannot be exported`);
  if (rate.greaterThan(0)) return 'S';
  return reverseCharge ? 'AE' : 'Z';
}

/** The wording a reverse-charge invoice must carry (AT: § 11 Abs. 1a UStG, DE: § 14a Abs. 5 UStG). */
export function reverseChargeNote(sellerCountry: string): string {
  if (sellerCountry === 'AT') return 'Übergang der Steuerschuld auf den Leistungsempfänger (Reverse Charge).';
  if (sellerCountry === 'DE') return 'Steuerschuldnerschaft des Leistungsempfängers (Reverse Charge).';
  return 'Reverse charge: VAT to be accounted for by the recipient (Art. 196 Directive 2006/112/EC).';
}

// --- the model ----------------------------------------------------------------------------------

export interface EInvoiceParty {
  /** Legal/company name (BT-27 / BT-44). */
  name: string;
  /** A person at the party, when both a company and a person name are known. */
  contactName: string | null;
  email: string | null;
  phone: string | null;
  vatId: string | null;
  taxNumber: string | null;
  address: PostalAddress;
}

export interface EInvoiceLine {
  position: number;
  /** First line of the description (BT-153 item name). */
  name: string;
  /** Full description when it says more than `name` (BT-154). */
  description: string | null;
  fullDescription: string;
  quantity: Decimal;
  unitCode: string;
  /** Net price per unit, never negative (BR-27); a negative line carries a negative quantity. */
  unitPrice: Decimal;
  netAmount: Decimal;
  taxRate: Decimal;
  category: VatCategory;
}

export interface EInvoiceTaxGroup {
  category: VatCategory;
  rate: Decimal;
  basis: Decimal;
  tax: Decimal;
  exemptionReason: string | null;
  exemptionReasonCode: string | null;
}

export interface EInvoiceModel {
  kind: 'invoice' | 'creditNote';
  number: string;
  issueDate: string;
  /** BT-72: the day of delivery or service; the issue date when none is stored. */
  deliveryDate: string;
  /** BG-14 (BT-73/74): the service period, when the invoice names one (serviceEndDate). */
  servicePeriod: { start: string; end: string } | null;
  dueDate: string | null;
  paymentTermDays: number | null;
  currency: string;
  seller: EInvoiceParty;
  buyer: EInvoiceParty;
  /** Stable id of the customer in our system (BT-46 is not filled from it; kept for references). */
  buyerId: string | null;
  lines: EInvoiceLine[];
  taxGroups: EInvoiceTaxGroup[];
  totals: { net: Decimal; tax: Decimal; gross: Decimal; paid: Decimal; due: Decimal };
  reverseCharge: boolean;
  /** Free-text notes for the document (invoice notes, footer, legal wording). */
  notes: string[];
  relatedInvoiceNumber: string | null;
  iban: string | null;
  bic: string | null;
}

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

  const lines: EInvoiceLine[] = [...invoice.items]
    .sort((a, b) => a.position - b.position)
    .map((item, index) => {
      const f = `items[${index}]`;
      const rate = dec(item.taxRate, `${f}.taxRate`);
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
        category: vatCategoryFor(rate, reverseCharge),
      };
    });

  const taxGroups: EInvoiceTaxGroup[] = invoice.taxBreakdown.map((g, i) => {
    const rate = dec(g.taxRate, `taxBreakdown[${i}].taxRate`);
    const category = vatCategoryFor(rate, reverseCharge);
    return {
      category,
      rate,
      basis: sign(dec(g.net, `taxBreakdown[${i}].net`)),
      tax: sign(dec(g.tax, `taxBreakdown[${i}].tax`)),
      exemptionReason: category === 'AE' ? REVERSE_CHARGE_REASON : null,
      exemptionReasonCode: category === 'AE' ? REVERSE_CHARGE_REASON_CODE : null,
    };
  });

  const notes: string[] = [];
  const n = blankToNull(invoice.notes);
  if (n) notes.push(n);
  const footer = blankToNull(invoice.footerText);
  if (footer) notes.push(footer);
  const usesReverseCharge = lines.some((l) => l.category === 'AE');
  if (usesReverseCharge) notes.push(reverseChargeNote(vatIdCountry(seller.vatId) ?? sellerCountry));

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
    seller: party(seller, sellerCountry, { taxNumber: seller.taxNumber }),
    buyer: party(customer, sellerCountry),
    buyerId: customer.id ?? null,
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
    notes,
    relatedInvoiceNumber: kind === 'creditNote' ? blankToNull(invoice.relatedInvoiceNumber) : null,
    iban: seller.iban ? seller.iban.replace(/\s+/g, '').toUpperCase() || null : null,
    bic: seller.bic ? seller.bic.replace(/\s+/g, '').toUpperCase() || null : null,
  };
}

// --- formatting ---------------------------------------------------------------------------------

/**
 * Money with two decimals. A value with more decimals is written as is (never silently
 * rounded), so the rule checks (BR-DEC-*) or the XSD reject it.
 */
export function formatAmount(d: Decimal): string {
  return d.decimalPlaces() <= 2 ? d.toFixed(2) : d.toFixed();
}

/** Quantities, rates and prices without trailing zeros ("2.5", "20"), never in exponent form. */
export function formatDecimal(d: Decimal): string {
  return d.isZero() ? '0' : d.toFixed();
}

/** Unit prices with at least two decimals ("12.50"), more when the price has them. */
export function formatPrice(d: Decimal): string {
  return d.decimalPlaces() < 2 ? d.toFixed(2) : d.toFixed();
}
