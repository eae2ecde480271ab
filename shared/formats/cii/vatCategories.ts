/**
 * The VAT category (UNTDID 5305) of a line or breakdown group, and intra-EU reverse charge:
 * the tax decisions the e-invoice writers share. A line's stored category (docs/vat-categories.md)
 * decides; documents built without one (tests, legacy data) keep the inference from rate and buyer.
 */
import Decimal from 'decimal.js';
import type { InvoiceItemView, PartyView, SellerView } from '../../domain/invoiceView';
import { categoryNote, categoryVatex, type TaxCategory, UNTDID_5305 } from '../../domain/tax/vatCategory';
import { EU_VAT_PREFIXES, normalizeVatId, vatIdCountry } from './countries';
import { EInvoiceExportError } from './exportError';

export type VatCategory = 'S' | 'Z' | 'E' | 'AE' | 'K' | 'G' | 'O';

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

/** What a line's VAT situation puts into an e-invoice. */
export interface LineVat {
  code: VatCategory;
  /** The stored category; null when the line has none and the code was inferred. */
  category: TaxCategory | null;
  /** BT-120: the statutory wording (categoryNote), or "Reverse charge" for an inferred AE line. */
  reason: string | null;
  /** BT-121: the VATEX code, where one exists. */
  vatex: string | null;
  /** The line's own exemptionNote, printed after the statutory wording. */
  note: string | null;
}

/**
 * The category of one line. `sellerCountry` is the tenant's country (exemption reasons are per
 * country); `reverseCharge` is the inference for lines without a stored category.
 */
export function lineVat(
  item: Pick<InvoiceItemView, 'taxCategory' | 'exemptionReason' | 'exemptionNote'>,
  rate: Decimal,
  reverseCharge: boolean,
  sellerCountry: string,
): LineVat {
  const category = item.taxCategory ?? null;
  if (!category) {
    const code = vatCategoryFor(rate, reverseCharge);
    return {
      code,
      category: null,
      reason: code === 'AE' ? REVERSE_CHARGE_REASON : null,
      vatex: code === 'AE' ? REVERSE_CHARGE_REASON_CODE : null,
      note: null,
    };
  }
  if (rate.isNegative() && !rate.isZero()) throw new EInvoiceExportError(`Negative VAT rate ${rate.toString()} cannot be exported`);
  const note = item.exemptionNote?.trim() || null;
  return {
    code: UNTDID_5305[category],
    category,
    reason: categoryNote(category, sellerCountry, item.exemptionReason),
    vatex: categoryVatex(category, sellerCountry, item.exemptionReason),
    note: category === 'standard' ? null : note,
  };
}

/**
 * BT-120/BT-121 of one breakdown group from its lines. EN 16931 allows exactly one group per
 * category for E/AE/K/G/O (BR-E-01 …), so lines with different exemption reasons share it: the
 * text names every distinct wording (then the lines' own notes), the code only when all agree.
 */
export function groupReason(lines: readonly LineVat[]): { reason: string | null; vatex: string | null } {
  const uniq = (xs: Array<string | null>) => [...new Set(xs.filter((x): x is string => !!x))];
  const texts = [...uniq(lines.map((l) => l.reason)), ...uniq(lines.map((l) => l.note))];
  const codes = uniq(lines.map((l) => l.vatex));
  const reason = texts.length > 0 ? texts.join(' ') : null;
  return { reason, vatex: codes.length === 1 && lines.every((l) => l.vatex) ? codes[0] : null };
}

/** Sum helper for the group amounts built from lines. */
export const sumDecimals = (ds: readonly Decimal[]) => ds.reduce((a, b) => a.plus(b), new Decimal(0));
