/**
 * Legally required notes that depend on who trades with whom.
 *
 * Reverse charge: for a B2B supply to a business in another EU member state the recipient owes
 * the VAT (Art. 196 Directive 2006/112/EC). The invoice must then say so (Art. 226 Nr. 11a;
 * § 11 Abs. 1a UStG AT; § 14a Abs. 5 UStG DE) and carry both VAT IDs.
 *
 * Every other VAT category a line stores (docs/vat-categories.md) prints its statutory wording
 * (categoryNote: AT § 11 UStG 1994, DE § 14 Abs. 4 Nr. 8 and § 14a UStG), then the line's own
 * exemption note. Documents built without stored categories keep the reverse-charge inference.
 */
import type { DocumentInput, InvoiceItemView, PartyView } from '../../domain/invoiceView';
import { toEur } from '../../domain/exchangeRates';
import { categoryNote, exemptionReason, type TaxCategory } from '../../domain/tax/vatCategory';
import { formatDate, formatMoney, isZero } from './format';
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
  /** With stored categories: the reverse-charge lines' positions (other 0 % lines may be exempt). */
  positions?: number[];
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
  if (hasStoredCategories(input)) {
    const rcLines = invoice.items.filter((i) => i.taxCategory === 'reverseCharge');
    if (rcLines.length === 0) return none;
    const partial = rcLines.length < invoice.items.length;
    return partial ? { applies: true, partial, positions: rcLines.map((i) => i.position).sort((a, b) => a - b) } : { applies: true, partial };
  }
  const buyerCountry = vatIdCountry(buyer.vatId);
  const sellerCountry = partyCountry(seller);
  if (!buyerCountry || !EU_MEMBER_STATES.has(buyerCountry) || buyerCountry === sellerCountry) return none;
  const zeroLines = invoice.items.filter((i) => isZero(i.taxRate));
  if (zeroLines.length === 0) return none;
  return { applies: true, partial: zeroLines.length < invoice.items.length };
}

export const REVERSE_CHARGE_TITLE = 'Steuerschuldnerschaft des Leistungsempfängers / Reverse Charge';

export function reverseChargeText(rc: ReverseCharge, buyerVatId: string): string {
  const scope = !rc.partial
    ? 'Es schuldet'
    : rc.positions
      ? `Für ${rc.positions.length === 1 ? 'Pos.' : 'die Positionen'} ${rc.positions.join(', ')} schuldet`
      : 'Für die mit 0 % ausgewiesenen Positionen schuldet';
  return (
    `${scope} der Leistungsempfänger die Umsatzsteuer (Art. 196 MwStSystRL; ` +
    `§ 19 Abs. 1 UStG AT / § 13b UStG DE). UID des Leistungsempfängers: ${buyerVatId}.`
  );
}

/** The lines say their category (every document the API builds); otherwise infer as before. */
export function hasStoredCategories(input: DocumentInput): boolean {
  return input.invoice.items.some((i) => i.taxCategory != null);
}

export const VAT_NOTES_TITLE = 'Hinweise zur Umsatzsteuer';

/** Every line is exempt under the small-business scheme (AT § 6 Abs. 1 Z 27, DE § 19 UStG). */
export function isSmallBusinessInvoice(input: DocumentInput): boolean {
  const { invoice, seller } = input;
  return (
    invoice.items.length > 0 &&
    invoice.items.every((i) => i.taxCategory === 'exempt' && exemptionReason((seller.country ?? '').toUpperCase(), i.exemptionReason)?.smallBusiness === true)
  );
}

/** "Pos. 1, 3: " when only some lines are meant; nothing when all are. */
function scope(lines: InvoiceItemView[], all: InvoiceItemView[]): string {
  return lines.length === all.length ? '' : `Pos. ${lines.map((l) => l.position).join(', ')}: `;
}

/**
 * The VAT wording besides the reverse-charge note: one paragraph per distinct category and
 * exemption reason, in line order, each followed by its lines' own notes. An intra-Community supply
 * names both VAT IDs (Art. 11 Abs. 1 UStG 1994 / § 14a Abs. 3 UStG); the reverse-charge paragraph
 * gets the notes of its lines. Quotes and incoming invoices carry none (no invoice of ours).
 */
export function vatNotes(input: DocumentInput): string[] {
  const { invoice, seller } = input;
  if (invoice.type === 'angebot' || invoice.type === 'eingangsrechnung' || !hasStoredCategories(input)) return [];
  const country = (seller.country ?? '').toUpperCase();
  const items = [...invoice.items].sort((a, b) => a.position - b.position);
  const groups = new Map<string, { category: TaxCategory; reason: string | null; lines: InvoiceItemView[] }>();
  for (const item of items) {
    const category = item.taxCategory;
    if (!category || category === 'standard') continue;
    const reason = category === 'exempt' ? (item.exemptionReason ?? null) : null;
    const key = `${category}/${reason ?? ''}`;
    const g = groups.get(key) ?? { category, reason, lines: [] };
    g.lines.push(item);
    groups.set(key, g);
  }
  const out: string[] = [];
  for (const g of groups.values()) {
    const notes = [...new Set(g.lines.map((l) => l.exemptionNote?.trim()).filter((n): n is string => !!n))];
    if (g.category === 'reverseCharge') {
      // The reverse-charge paragraph itself is printed under its own title (reverseChargeText).
      if (notes.length > 0) out.push(`${scope(g.lines, items)}${notes.join(' ')}`);
      continue;
    }
    const parts = [categoryNote(g.category, country, g.reason) ?? ''];
    if (g.category === 'intraCommunitySupply') {
      parts.push(`UID des Lieferers: ${seller.vatId ?? '–'}. UID des Abnehmers: ${invoice.customer?.vatId ?? '–'}.`);
    }
    parts.push(...notes);
    out.push(`${scope(g.lines, items)}${parts.filter(Boolean).join(' ')}`);
  }
  return out;
}

/**
 * A document in another currency states its VAT in EUR with the rate used (AT § 20 Abs. 6 UStG
 * 1994, DE § 16 Abs. 6 UStG): "USt. in EUR: 57,03 € (Kurs 1 EUR = 1,0867 USD vom 26.11.2026,
 * EZB-Referenzkurs)". Null for EUR documents, without a stored rate and when no VAT is charged.
 */
export function vatInEur(input: DocumentInput): string | null {
  const { invoice } = input;
  const rate = invoice.exchangeRate;
  if (!rate || (invoice.currency || 'EUR').toUpperCase() === 'EUR' || invoice.type === 'eingangsrechnung' || isSmallBusinessInvoice(input)) return null;
  const source = rate.source === 'ecb' ? ', EZB-Referenzkurs' : '';
  return `USt. in EUR: ${formatMoney(toEur(invoice.totalTax, rate.rate))} (Kurs 1 EUR = ${rate.rate.replace('.', ',')} ${invoice.currency.toUpperCase()} vom ${formatDate(rate.date)}${source})`;
}
