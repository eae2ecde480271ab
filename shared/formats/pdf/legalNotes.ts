/**
 * Legally required notes that depend on who trades with whom.
 *
 * Reverse charge: for a B2B supply to a business in another EU member state the recipient owes
 * the VAT (Art. 196 Directive 2006/112/EC). The invoice must then say so (Art. 226 Nr. 11a;
 * § 11 Abs. 1a UStG AT; § 14a Abs. 5 UStG DE) and carry both VAT IDs.
 */
import type { DocumentInput, PartyView } from '../../domain/invoiceView';
import { isZero } from './format';
import { EU_COUNTRIES } from '../../domain/vatId';

export const EU_MEMBER_STATES: ReadonlySet<string> = new Set(EU_COUNTRIES);

/** Country of a VAT ID's prefix; Greece uses "EL" in VAT IDs but "GR" as ISO code. */
export function vatIdCountry(vatId: string | null | undefined): string | null {
  const m = /^\s*([A-Za-z]{2})/.exec(vatId ?? '');
  if (!m) return null;
  const prefix = m[1].toUpperCase();
  return prefix === 'EL' ? 'GR' : prefix;
}

function partyCountry(party: PartyView | null | undefined): string | null {
  if (!party) return null;
  return vatIdCountry(party.vatId) ?? (party.country ? party.country.toUpperCase() : null);
}

export interface ReverseCharge {
  applies: boolean;
  /** True when only some lines are at 0 %: the note then names those lines. */
  partial: boolean;
}

/**
 * Applies when the buyer shows a VAT ID from an EU member state other than the seller's and a
 * line is taxed at 0 %. Quotes and incoming invoices carry no such note (the first is no
 * invoice, on the second the tenant is the recipient, not the issuer).
 */
export function reverseCharge(input: DocumentInput): ReverseCharge {
  const { invoice, seller } = input;
  const none = { applies: false, partial: false };
  if (invoice.type === 'angebot' || invoice.type === 'eingangsrechnung') return none;
  const buyer = invoice.customer;
  if (!buyer?.vatId) return none;
  const buyerCountry = vatIdCountry(buyer.vatId);
  const sellerCountry = partyCountry(seller);
  if (!buyerCountry || !EU_MEMBER_STATES.has(buyerCountry) || buyerCountry === sellerCountry) return none;
  const zeroLines = invoice.items.filter((i) => isZero(i.taxRate));
  if (zeroLines.length === 0) return none;
  return { applies: true, partial: zeroLines.length < invoice.items.length };
}

export const REVERSE_CHARGE_TITLE = 'Steuerschuldnerschaft des Leistungsempfängers / Reverse Charge';

export function reverseChargeText(rc: ReverseCharge, buyerVatId: string): string {
  const scope = rc.partial ? 'Für die mit 0 % ausgewiesenen Positionen schuldet' : 'Es schuldet';
  return (
    `${scope} der Leistungsempfänger die Umsatzsteuer (Art. 196 MwStSystRL; ` +
    `§ 19 Abs. 1 UStG AT / § 13b UStG DE). UID des Leistungsempfängers: ${buyerVatId}.`
  );
}
