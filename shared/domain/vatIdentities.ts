import Decimal from 'decimal.js';

/**
 * Which VAT identities a sales invoice or credit note must show; one rule for finalization
 * (sendInvoice.ts, before a number is taken: its PDF is the legal invoice) and the ebInterface
 * writer (EBI-UID-*, EBI-AE). Seller identity above the small-amount limit (§ 11 Abs. 1 Z 3 lit. i
 * and Abs. 6 UStG AT, § 14 Abs. 4 Nr. 2 UStG DE), recipient UID over EUR 10,000 (lit. j), both UIDs
 * for reverse charge (§ 11 Abs. 1a UStG); non-EUR totals count as over (docs/invoices.md, "Send").
 */

/** § 11 Abs. 1 Z 3 lit. j UStG: above this gross total (EUR) the recipient's UID is required. */
export const RECIPIENT_UID_THRESHOLD_EUR = new Decimal('10000');
/**
 * Up to this gross amount a small-amount invoice (Kleinbetragsrechnung) needs no seller identity:
 * EUR 400 in Austria (§ 11 Abs. 6 UStG), EUR 250 in Germany (§ 33 UStDV); other sellers get the
 * Austrian limit.
 */
export const smallInvoiceLimitEur = (sellerCountry: string): Decimal => new Decimal(sellerCountry === 'DE' ? '250' : '400');

/**
 * Placeholders users type when a party has no UID ("00000000", e-rechnung.gv.at's "ATU00000000").
 * They are not a VAT id: a rule that needs a UID must not be satisfied by one.
 */
const VAT_ID_PLACEHOLDER_RE = /^(ATU)?0{8}$/;

/** The party's VAT id, or null when it has none, a blank one or only a placeholder. */
export function realVatId(vatId: string | null | undefined): string | null {
  if (!vatId) return null;
  const normalized = vatId.replace(/[\s.\-/]/g, '').toUpperCase();
  return normalized && !VAT_ID_PLACEHOLDER_RE.test(normalized) ? vatId : null;
}

/**
 * A business customer, for the recipient-UID rule. Customers carry no business/consumer flag, so
 * a company name is the signal; a consumer never has a UID and must not be refused for lacking one.
 */
export function isBusinessCustomer(customer: { company?: string | null } | null | undefined): boolean {
  return !!customer?.company?.trim();
}

/** The seller's identity that satisfies the seller rule in its country: the UID, in Germany also the Steuernummer. */
export function sellerHasLegalIdentity(seller: { vatId: string | null; taxNumber: string | null; country: string }): boolean {
  return !!realVatId(seller.vatId) || (seller.country === 'DE' && !!seller.taxNumber?.trim());
}

export interface VatIdentityFacts {
  /** ISO 4217, upper case. */
  currency: string;
  /** Gross total; the sign is ignored (credit notes). */
  gross: Decimal;
  /** Some line has a VAT rate above 0. */
  chargesVat: boolean;
  /** Some line is an intra-EU reverse charge (category AE). */
  reverseCharge: boolean;
  /** ISO countries of the parties as the documents show them (einvoiceModel's parsePostalAddress). */
  sellerCountry: string;
  buyerCountry: string;
  buyerIsBusiness: boolean;
}

export interface RequiredVatIdentities {
  /** The seller's identity (see sellerHasLegalIdentity; ebInterface can carry only the UID). */
  seller: boolean;
  /** The recipient's UID (lit. j). */
  recipientUid: boolean;
  /** Both UIDs (reverse charge). */
  reverseCharge: boolean;
}

export function requiredVatIdentities(f: VatIdentityFacts): RequiredVatIdentities {
  const gross = f.gross.abs();
  const smallInvoice = f.currency === 'EUR' && gross.lessThanOrEqualTo(smallInvoiceLimitEur(f.sellerCountry));
  const overRecipientThreshold = f.currency === 'EUR' ? gross.greaterThan(RECIPIENT_UID_THRESHOLD_EUR) : true;
  return {
    seller: f.chargesVat && !smallInvoice,
    recipientUid: overRecipientThreshold && f.buyerIsBusiness && f.sellerCountry === 'AT' && f.buyerCountry === 'AT',
    reverseCharge: f.reverseCharge,
  };
}
