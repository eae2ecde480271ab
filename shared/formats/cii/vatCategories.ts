/**
 * The VAT category (UNTDID 5305) of a line or breakdown group, and intra-EU reverse charge:
 * the tax decisions the e-invoice writers share.
 */
import type Decimal from 'decimal.js';
import type { PartyView, SellerView } from '../../domain/invoiceView';
import { EU_VAT_PREFIXES, normalizeVatId, vatIdCountry } from './countries';
import { EInvoiceExportError } from './exportError';

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
