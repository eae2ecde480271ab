import type { InvoiceType } from './invoiceView';
import type { TaxCategory } from './tax/vatCategory';

/** An invoice as the API and the jobs hand it to the invoice commands (create, full update). */
export interface InvoiceItemInput {
  description: string;
  quantity: number | string;
  unit?: string | null;
  unitPrice: string;
  taxRate: string;
  /** The line's VAT situation (docs/vat-categories.md); inferred when absent. */
  taxCategory?: TaxCategory | null;
  /** Required for taxCategory exempt: a code of GET /api/tax/exemption-reasons. */
  exemptionReason?: string | null;
  /** Free text printed after the statutory wording. */
  exemptionNote?: string | null;
  /** Ignored: positions are the array order, renumbered 1..N (spec rule 1). */
  position?: number;
}

/** A manual rate as a client sends it: units of the currency per EUR; ECB rates are looked up, never sent. */
export interface ExchangeRateInput {
  rate: string;
  date: string;
  source: 'manual';
}

export interface InvoiceInput {
  type?: InvoiceType;
  customerId?: string | null;
  supplierId?: string | null;
  items?: InvoiceItemInput[];
  notes?: string | null;
  paymentTermDays?: number | null;
  issueDate?: string | null;
  serviceDate?: string | null;
  /** Last day of the service period that starts on serviceDate (null: a single day). */
  serviceEndDate?: string | null;
  /** BT-10 (else the customer's buyerReference) and BT-13 of a sales document's e-invoice. */
  buyerReference?: string | null;
  orderReference?: string | null;
  footerText?: string | null;
  customFields?: Record<string, string> | null;
  detailsMarkdown?: string | null;
  currency?: string | null;
  expectedTotalGross?: string | null;
  invoiceNumber?: string | null;
  invoiceDate?: string | null;
  relatedInvoiceId?: string | null;
  /**
   * Documents in another currency than EUR: the rate the user enters instead of the ECB's
   * (docs/exchange-rates.md); without one, finalize (or an incoming invoice's create) looks it up.
   */
  exchangeRate?: ExchangeRateInput | null;
  /** Incoming invoices created by the webhook pipeline (not accepted over the API). */
  source?: string | null;
  externalId?: string | null;
}
