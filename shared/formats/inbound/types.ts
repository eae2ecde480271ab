/**
 * The one model every inbound e-invoice (UBL, CII, Factur-X/ZUGFeRD PDF, ebInterface) is read
 * into, named after the EN 16931 business terms. Money and quantities are decimal strings as the
 * document wrote them (normalised: no exponent, no leading '+'), never numbers.
 */

export type InboundFormat = 'ubl' | 'cii' | 'facturx-pdf' | 'ebinterface';
export type InboundSyntax = 'UBL' | 'CII' | 'ebInterface';

export interface InboundAddress {
  lines: string[];
  city: string | null;
  postcode: string | null;
  /** ISO 3166-1 alpha-2 (BT-40 / BT-55). */
  country: string | null;
}

export interface InboundSeller {
  name: string | null;
  /** BT-31. */
  vatId: string | null;
  /** BT-32, the seller's tax registration that is not a VAT ID (German Steuernummer). */
  taxNumber: string | null;
  address: InboundAddress;
  /** BT-84 of the first credit-transfer payment means. */
  iban: string | null;
  email: string | null;
}

export interface InboundBuyer {
  name: string | null;
  vatId: string | null;
}

export interface InboundLine {
  quantity: string;
  unitCode: string | null;
  name: string | null;
  /** BT-146, per BT-149 base quantity as written. */
  netPrice: string | null;
  /** BT-131. */
  netAmount: string;
  /** UNTDID 5305 code (S, Z, E, AE, K, G, O, L, M). */
  vatCategory: string | null;
  vatRate: string | null;
}

export interface InboundAllowanceCharge {
  amount: string;
  vatCategory: string | null;
  vatRate: string | null;
  reason: string | null;
}

export interface InboundVatBreakdown {
  category: string | null;
  rate: string | null;
  /** BT-116. */
  basis: string;
  /** BT-117. */
  tax: string;
  exemptionReason: string | null;
  exemptionCode: string | null;
}

export interface InboundTotals {
  lineNet: string | null;
  allowances: string | null;
  charges: string | null;
  net: string | null;
  tax: string | null;
  gross: string | null;
  prepaid: string | null;
  rounding: string | null;
  due: string | null;
  /** XRechnung extension: sum of the third-party payments (BT-DEX-002) BT-115 includes; null without. */
  thirdPartyPayments: string | null;
}

export interface InboundInvoice {
  kind: 'invoice' | 'creditNote';
  number: string;
  /** ISO date (YYYY-MM-DD). */
  issueDate: string;
  dueDate: string | null;
  currency: string;
  buyerReference: string | null;
  orderReference: string | null;
  precedingInvoiceNumber: string | null;
  seller: InboundSeller;
  buyer: InboundBuyer;
  lines: InboundLine[];
  allowances: InboundAllowanceCharge[];
  charges: InboundAllowanceCharge[];
  vatBreakdown: InboundVatBreakdown[];
  totals: InboundTotals;
  /** What a person reads besides the booked terms: shown by the rendering of GET …/pdf, never booked. */
  presentation?: InboundPresentation;
}

/** Terms the booking does not use but the rendering of the e-invoice shows (docs/e-invoicing-inbound.md). */
export interface InboundPresentation {
  /** BT-22, every note. */
  notes: string[];
  /** BT-20. */
  paymentTerms: string | null;
  /** BT-81 (UNTDID 4461: 58 SEPA credit transfer, 30 credit transfer, 59 direct debit …). */
  paymentMeansCode: string | null;
  /** BT-83. */
  remittanceInformation: string | null;
  /** BT-85, BT-86 of the account BT-84 (seller.iban). */
  accountName: string | null;
  bic: string | null;
  /** BT-72 as written (ISO date). */
  deliveryDate: string | null;
  buyerAddress: InboundAddress | null;
  /** BT-126, BT-154 per line, in the order of `lines`. */
  lineIds: (string | null)[];
  lineDescriptions: (string | null)[];
}

export type InboundResult =
  | {
      ok: true;
      format: InboundFormat;
      syntax: InboundSyntax;
      /** BT-24 (UBL CustomizationID, CII GuidelineSpecifiedDocumentContextParameter) or the ebInterface namespace. */
      profile: string | null;
      invoice: InboundInvoice;
      warnings: string[];
      /** The invoice XML as read (for a PDF the embedded one), decoded: what validate.ts checks. */
      xml: string;
    }
  | { ok: false; reason: string };
