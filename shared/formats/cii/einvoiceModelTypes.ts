/** The shape of the normalised e-invoice both writers serialise (built by toEInvoiceModel). */
import type Decimal from 'decimal.js';
import type { PostalAddress } from './postalAddress';
import type { TaxCategory } from '../../domain/tax/vatCategory';
import type { VatCategory } from './vatCategories';

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
  /** BT-34 / BT-49: the electronic address (Peppol participant id): ISO 6523 / EAS scheme and id, e.g. 9914 + ATU12345678, 0204 + a Leitweg-ID. */
  electronicAddress: { scheme: string; id: string } | null;
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
  /** BT-152; not written for category O (BR-O-05). */
  taxRate: Decimal;
  category: VatCategory;
  /** The stored category (null: inferred for a document built without one). */
  taxCategory: TaxCategory | null;
  /** The line's statutory VAT wording and its own exemption note (ebInterface line comment). */
  vatReason: string | null;
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
  /** BT-10: the buyer's reference (for German public buyers the Leitweg-ID; XRechnung requires it: BR-DE-15). */
  buyerReference: string | null;
  /** BT-13: the buyer's purchase order reference. */
  orderReference: string | null;
  lines: EInvoiceLine[];
  taxGroups: EInvoiceTaxGroup[];
  totals: { net: Decimal; tax: Decimal; gross: Decimal; paid: Decimal; due: Decimal };
  reverseCharge: boolean;
  /**
   * A document in another currency with its stored rate: the VAT in EUR (BT-6 = EUR, BT-111), as
   * AT § 20 Abs. 6 UStG 1994 / DE § 16 Abs. 6 UStG ask. Null for EUR documents and without a rate.
   */
  taxCurrency: { code: 'EUR'; taxTotal: Decimal; rate: string; date: string; source: 'ecb' | 'manual' } | null;
  /** BT-80: the buyer's country, written for intra-Community supplies (BR-IC-12). */
  deliverToCountry: string | null;
  /** Free-text notes for the document (invoice notes, footer, legal wording). */
  notes: string[];
  relatedInvoiceNumber: string | null;
  iban: string | null;
  bic: string | null;
}
