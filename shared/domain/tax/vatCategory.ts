import Decimal from 'decimal.js';
import { EU_COUNTRIES, normalizeVatId, vatIdCountry } from '../vatId';

/**
 * The VAT situation of one line (docs/vat-categories.md). The API names it in words; documents
 * write the UNTDID 5305 code (EN 16931 BT-151/BT-118). Pure: the facts come from the caller.
 */
export const TAX_CATEGORIES = ['standard', 'zeroRated', 'exempt', 'reverseCharge', 'intraCommunitySupply', 'export', 'notSubject'] as const;
/**
 * Purchase-only: VAT another country's supplier charged (docs/vat-categories.md, "Foreign VAT").
 * It is not input tax of the domestic return (refund procedure, Directive 2008/9/EC), so reports
 * leave it out and it is part of the expense. Only the e-invoice import sets it (createInvoice's
 * `einvoice.foreignVat`); it is not in TAX_CATEGORIES, the API's list.
 */
export const FOREIGN_VAT = 'foreignVat' as const;
export type TaxCategory = (typeof TAX_CATEGORIES)[number] | typeof FOREIGN_VAT;

export const UNTDID_5305: Record<TaxCategory, 'S' | 'Z' | 'E' | 'AE' | 'K' | 'G' | 'O'> = {
  standard: 'S',
  foreignVat: 'S',
  zeroRated: 'Z',
  exempt: 'E',
  reverseCharge: 'AE',
  intraCommunitySupply: 'K',
  export: 'G',
  notSubject: 'O',
};

/** CEF VATEX code of the categories that have one of their own (exempt lines take their reason's). */
export const CATEGORY_VATEX: Partial<Record<TaxCategory, string>> = {
  reverseCharge: 'VATEX-EU-AE',
  intraCommunitySupply: 'VATEX-EU-IC',
  export: 'VATEX-EU-G',
  notSubject: 'VATEX-EU-O',
};

export type TaxCountry = 'AT' | 'DE';

export interface ExemptionReason {
  code: string;
  text: string;
  /** As printed on the document, e.g. "§ 6 Abs. 1 Z 27 UStG 1994". */
  legalBasis: string;
  /** CEF VATEX code where the EU list has one for this exemption; null otherwise. */
  vatex: string | null;
  /** The small-business scheme's reason: chosen by the tenant setting, not per line. */
  smallBusiness?: true;
}

/**
 * Exempt supplies ("unecht steuerfrei": no input tax deduction) a small business meets. The AT
 * list follows § 6 Abs. 1 UStG 1994, the DE list § 4 and § 19 UStG; VATEX only where the code
 * names the same Directive article (Art. 132 public-interest activities).
 */
export const EXEMPTION_REASONS: Record<TaxCountry, readonly ExemptionReason[]> = {
  AT: [
    { code: 'AT-6-1-7', text: 'Leistungen der Sozialversicherungs- und Fürsorgeträger', legalBasis: '§ 6 Abs. 1 Z 7 UStG 1994', vatex: 'VATEX-EU-132-1G' },
    { code: 'AT-6-1-8', text: 'Umsätze im Geld- und Kapitalverkehr', legalBasis: '§ 6 Abs. 1 Z 8 UStG 1994', vatex: null },
    { code: 'AT-6-1-9a', text: 'Grundstücksumsätze (Grunderwerbsteuergesetz)', legalBasis: '§ 6 Abs. 1 Z 9 lit. a UStG 1994', vatex: null },
    { code: 'AT-6-1-9c', text: 'Leistungen auf Grund eines Versicherungsverhältnisses', legalBasis: '§ 6 Abs. 1 Z 9 lit. c UStG 1994', vatex: null },
    { code: 'AT-6-1-11', text: 'Schul- und Bildungsleistungen privater Schulen', legalBasis: '§ 6 Abs. 1 Z 11 UStG 1994', vatex: 'VATEX-EU-132-1I' },
    { code: 'AT-6-1-16', text: 'Vermietung und Verpachtung von Grundstücken', legalBasis: '§ 6 Abs. 1 Z 16 UStG 1994', vatex: null },
    { code: 'AT-6-1-18', text: 'Leistungen von Kranken- und Kuranstalten', legalBasis: '§ 6 Abs. 1 Z 18 UStG 1994', vatex: 'VATEX-EU-132-1B' },
    {
      code: 'AT-6-1-19',
      text: 'Heilbehandlung als Arzt, Zahnarzt, Psychotherapeut oder Hebamme',
      legalBasis: '§ 6 Abs. 1 Z 19 UStG 1994',
      vatex: 'VATEX-EU-132-1C',
    },
    {
      code: 'AT-6-1-27',
      text: 'Umsatzsteuerbefreit – Kleinunternehmer',
      legalBasis: '§ 6 Abs. 1 Z 27 UStG 1994',
      vatex: null,
      smallBusiness: true,
    },
  ],
  DE: [
    { code: 'DE-4-8', text: 'Umsätze im Geld- und Kapitalverkehr', legalBasis: '§ 4 Nr. 8 UStG', vatex: null },
    { code: 'DE-4-9a', text: 'Grundstücksumsätze (Grunderwerbsteuergesetz)', legalBasis: '§ 4 Nr. 9 Buchst. a UStG', vatex: null },
    { code: 'DE-4-10', text: 'Leistungen auf Grund eines Versicherungsverhältnisses', legalBasis: '§ 4 Nr. 10 UStG', vatex: null },
    { code: 'DE-4-11', text: 'Leistungen als Bausparkassen- oder Versicherungsvertreter', legalBasis: '§ 4 Nr. 11 UStG', vatex: null },
    { code: 'DE-4-12', text: 'Vermietung und Verpachtung von Grundstücken', legalBasis: '§ 4 Nr. 12 UStG', vatex: null },
    {
      code: 'DE-4-14a',
      text: 'Heilbehandlung als Arzt, Zahnarzt, Heilpraktiker oder ähnlicher Heilberuf',
      legalBasis: '§ 4 Nr. 14 Buchst. a UStG',
      vatex: 'VATEX-EU-132-1C',
    },
    {
      code: 'DE-4-14b',
      text: 'Krankenhausbehandlung und ärztliche Heilbehandlung in Einrichtungen',
      legalBasis: '§ 4 Nr. 14 Buchst. b UStG',
      vatex: 'VATEX-EU-132-1B',
    },
    { code: 'DE-4-16', text: 'Betreuungs- und Pflegeleistungen', legalBasis: '§ 4 Nr. 16 UStG', vatex: 'VATEX-EU-132-1G' },
    { code: 'DE-4-21', text: 'Schul- und Bildungsleistungen', legalBasis: '§ 4 Nr. 21 UStG', vatex: 'VATEX-EU-132-1I' },
    {
      code: 'DE-4-22',
      text: 'Vorträge, Kurse und Veranstaltungen wissenschaftlicher oder belehrender Art',
      legalBasis: '§ 4 Nr. 22 Buchst. a UStG',
      vatex: 'VATEX-EU-132-1I',
    },
    {
      code: 'DE-19',
      text: 'Steuerfreier Umsatz – Kleinunternehmer',
      legalBasis: '§ 19 Abs. 1 UStG',
      vatex: null,
      smallBusiness: true,
    },
  ],
};

export const isTaxCountry = (c: string | null | undefined): c is TaxCountry => c === 'AT' || c === 'DE';

export function exemptionReason(country: string | null | undefined, code: string | null | undefined): ExemptionReason | null {
  if (!isTaxCountry(country) || !code) return null;
  return EXEMPTION_REASONS[country].find((r) => r.code === code) ?? null;
}

/** The small-business scheme's reason for a seller country (AT § 6 Abs. 1 Z 27, DE § 19). */
export function smallBusinessReason(country: TaxCountry): ExemptionReason {
  return EXEMPTION_REASONS[country].find((r) => r.smallBusiness)!;
}

/** What decides a line's category: who sells to whom, at what rate, under which scheme. */
export interface LineTaxFacts {
  sellerCountry: string;
  sellerVatId: string | null;
  buyerCountry: string | null;
  buyerVatId: string | null;
  taxRate: string;
  smallBusiness: boolean;
}

const EU: ReadonlySet<string> = new Set(EU_COUNTRIES);

function buyerVatCountry(f: LineTaxFacts): string | null {
  return f.buyerVatId ? vatIdCountry(normalizeVatId(f.buyerVatId)) : null;
}

/** The buyer holds a VAT ID of a member state other than the seller's (AE and K need it). */
export function buyerInOtherMemberState(f: LineTaxFacts): boolean {
  const c = buyerVatCountry(f);
  const seller = (f.sellerVatId && vatIdCountry(normalizeVatId(f.sellerVatId))) || f.sellerCountry;
  return !!c && EU.has(c) && c !== seller;
}

/** The buyer is known to be outside the EU (by its country, or its VAT ID when it has no country). */
export function buyerOutsideEu(f: LineTaxFacts): boolean {
  const c = f.buyerCountry?.toUpperCase() ?? buyerVatCountry(f);
  return !!c && !EU.has(c);
}

/**
 * The category when the input names none, as before this field existed: a positive rate is
 * standard; 0 % is reverse charge to a business in another member state, export to a buyer outside
 * the EU, and otherwise unknown (null) — the line must be classified before the invoice is sent.
 * A small-business seller's lines are exempt whatever the buyer.
 */
export function inferTaxCategory(f: LineTaxFacts): TaxCategory | null {
  if (f.smallBusiness) return 'exempt';
  if (new Decimal(f.taxRate).greaterThan(0)) return 'standard';
  if (buyerInOtherMemberState(f)) return 'reverseCharge';
  if (buyerOutsideEu(f)) return 'export';
  return null;
}

export interface CategoryProblem {
  field: 'taxCategory' | 'exemptionReason' | 'taxRate';
  message: string;
}

/**
 * Checks a stated category against the facts; null when it fits. The messages name the rule so a
 * user can fix the line (400 INVALID_INPUT names the item's field).
 */
export function checkTaxCategory(category: TaxCategory, reasonCode: string | null | undefined, f: LineTaxFacts): CategoryProblem | null {
  const positive = new Decimal(f.taxRate).greaterThan(0);
  if (f.smallBusiness) {
    if (positive) return { field: 'taxRate', message: 'must be 0: a small business under the small-business scheme charges no VAT' };
    if (category !== 'exempt') return { field: 'taxCategory', message: 'must be exempt: the tenant uses the small-business scheme' };
  }
  if (category === 'standard') return positive ? null : { field: 'taxRate', message: 'must be greater than 0 for taxCategory standard' };
  if (positive) return { field: 'taxRate', message: `must be 0 for taxCategory ${category}` };
  // Austria's only 0 % rate (photovoltaic modules, § 28 Abs. 62 UStG 1994) ended with 2025.
  if (category === 'zeroRated' && f.sellerCountry === 'AT') {
    return { field: 'taxCategory', message: 'zeroRated does not exist in Austria; use exempt with an exemptionReason, or another category' };
  }
  if (category === 'reverseCharge' || category === 'intraCommunitySupply') {
    if (!f.sellerVatId) return { field: 'taxCategory', message: `${category} needs the seller's VAT ID (set vatId in the settings)` };
    if (!buyerInOtherMemberState(f)) return { field: 'taxCategory', message: `${category} needs the buyer's VAT ID of another EU member state` };
  }
  if (category === 'exempt') {
    if (!reasonCode) return { field: 'exemptionReason', message: 'is required for taxCategory exempt (GET /api/tax/exemption-reasons)' };
    const reason = exemptionReason(f.sellerCountry, reasonCode);
    if (!reason)
      return { field: 'exemptionReason', message: `${reasonCode} is not an exemption reason of ${f.sellerCountry} (GET /api/tax/exemption-reasons)` };
    if (reason.smallBusiness && !f.smallBusiness) {
      return { field: 'exemptionReason', message: `${reasonCode} applies only when the small-business scheme is on (PUT /api/settings {smallBusiness: true})` };
    }
  } else if (reasonCode) {
    return { field: 'exemptionReason', message: 'is only allowed with taxCategory exempt' };
  }
  return null;
}

/** The categories that would pass checkTaxCategory for a bare 0 % line (the refusal to send names them). */
export function fittingZeroCategories(f: LineTaxFacts): TaxCategory[] {
  if (f.smallBusiness) return ['exempt'];
  const out: TaxCategory[] = f.sellerCountry === 'AT' ? ['exempt'] : ['zeroRated', 'exempt'];
  if (f.sellerVatId && buyerInOtherMemberState(f)) out.push('reverseCharge', 'intraCommunitySupply');
  out.push('export', 'notSubject');
  return out;
}

/**
 * The statutory wording a document carries for a category (AT § 11 UStG 1994, DE § 14 Abs. 4
 * Nr. 8 and § 14a UStG; Art. 226 Nr. 11 and 11a VAT Directive for other sellers). The same text
 * is the e-invoice's exemption reason (BT-120). Null for standard lines: they need no note.
 */
export function categoryNote(category: TaxCategory, sellerCountry: string, reasonCode?: string | null): string | null {
  const de = sellerCountry === 'DE';
  const at = sellerCountry === 'AT';
  switch (category) {
    case 'standard':
    case 'foreignVat':
      return null;
    case 'zeroRated':
      return de ? 'Umsatzsteuer 0 % (Nullsteuersatz gemäß § 12 Abs. 3 UStG).' : 'VAT 0 % (zero rate).';
    case 'exempt': {
      const reason = exemptionReason(sellerCountry, reasonCode);
      if (!reason) return 'Steuerfreie Leistung.';
      if (reason.code === 'DE-19') return 'Gemäß § 19 UStG wird keine Umsatzsteuer berechnet (Kleinunternehmer).';
      if (reason.code === 'AT-6-1-27') return 'Umsatzsteuerbefreit – Kleinunternehmer gemäß § 6 Abs. 1 Z 27 UStG 1994.';
      return `${reason.text}: steuerfrei gemäß ${reason.legalBasis}.`;
    }
    case 'reverseCharge':
      if (de) return 'Steuerschuldnerschaft des Leistungsempfängers (Reverse Charge).';
      if (at) return 'Übergang der Steuerschuld auf den Leistungsempfänger (Reverse Charge).';
      return 'Reverse charge: VAT to be accounted for by the recipient (Art. 196 Directive 2006/112/EC).';
    case 'intraCommunitySupply':
      if (de) return 'Steuerfreie innergemeinschaftliche Lieferung (§ 4 Nr. 1 Buchst. b i. V. m. § 6a UStG).';
      if (at) return 'Steuerfreie innergemeinschaftliche Lieferung (Art. 6 Abs. 1 i. V. m. Art. 7 UStG 1994).';
      return 'Exempt intra-Community supply (Art. 138 Directive 2006/112/EC).';
    case 'export':
      if (de) return 'Steuerfreie Ausfuhrlieferung (§ 4 Nr. 1 Buchst. a i. V. m. § 6 UStG).';
      if (at) return 'Steuerfreie Ausfuhrlieferung (§ 6 Abs. 1 Z 1 i. V. m. § 7 UStG 1994).';
      return 'Exempt export supply (Art. 146 Directive 2006/112/EC).';
    case 'notSubject':
      return de || at ? 'Nicht im Inland steuerbare Leistung.' : 'Not subject to VAT in the seller’s member state.';
  }
}

/** The VATEX code a line's e-invoice carries (BT-121): the category's own, or the exemption reason's. */
export function categoryVatex(category: TaxCategory, sellerCountry: string, reasonCode?: string | null): string | null {
  if (category === 'exempt') return exemptionReason(sellerCountry, reasonCode)?.vatex ?? null;
  return CATEGORY_VATEX[category] ?? null;
}
