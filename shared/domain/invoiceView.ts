import type { TaxCategory } from './tax/vatCategory';
/**
 * The shape of an invoice as the API returns it and as every output format (PDF, ZUGFeRD/CII,
 * ebInterface, e-mail) consumes it. Money values are decimal strings with exactly two places
 * ("1234.50"); quantities are JSON numbers with up to four places; tax rates are strings ("20").
 * Formats receive this plus the seller (tenant) so they never query the database themselves.
 */
export type InvoiceType = 'rechnung' | 'angebot' | 'gutschrift' | 'eingangsrechnung';
export type InvoiceStatus = 'entwurf' | 'offen' | 'teilbezahlt' | 'bezahlt' | 'storniert';
export type Country = string; // ISO 3166-1 alpha-2, e.g. "AT", "DE"

export interface PartyView {
  name: string;
  company?: string | null;
  email?: string | null;
  phone?: string | null;
  /** Free-form postal address as entered; lines separated by "\n" or ", ". */
  address?: string | null;
  vatId?: string | null;
  /** ISO country code; derived from vatId prefix or tenant country when not stored. */
  country?: Country | null;
  /** Electronic address (BT-34 / BT-49): ISO 6523 / EAS scheme and id (docs/e-invoicing.md). */
  peppolId?: { scheme: string; id: string } | null;
  /** A customer's default buyer reference (BT-10). */
  buyerReference?: string | null;
}

export interface SellerView extends PartyView {
  /** Seller is the tenant: company name, address, VAT ID, tax number, bank data. */
  taxNumber?: string | null;
  iban?: string | null;
  bic?: string | null;
  country: Country;
  /** The seller contact of e-invoices (BT-41/42/43), from the tenant settings. */
  contactName?: string | null;
  contactPhone?: string | null;
  contactEmail?: string | null;
}

export interface InvoiceItemView {
  position: number;
  description: string;
  unit: string | null;
  /** JSON number (the spec's Item table), at most 4 places and exact; writers format it via fmtQuantity(), never by float arithmetic. */
  quantity: number;
  unitPrice: string; // money string
  taxRate: string; // "20"
  netAmount: string;
  taxAmount: string;
  grossAmount: string;
  /**
   * docs/vat-categories.md; null only on a draft's 0 % line nothing could classify yet. The API
   * always sets these; documents built without them infer the category from rate and parties.
   */
  taxCategory?: TaxCategory | null;
  exemptionReason?: string | null;
  exemptionNote?: string | null;
}

export interface ExchangeRateView {
  /** Decimal string, e.g. "1.0823" (USD per EUR). */
  rate: string;
  /** YYYY-MM-DD: the ECB publication day used, or the day a manual rate is for. */
  date: string;
  source: 'ecb' | 'manual';
}

/** Something that will stop the invoice from being sent, said while it is still a draft. */
export interface InvoiceWarning {
  field: string;
  message: string;
}

export interface TaxBreakdownView {
  taxRate: string;
  net: string;
  tax: string;
}

export interface PaymentView {
  id: string;
  amount: string;
  date: string; // YYYY-MM-DD
  method: string;
  createdAt: string;
}

export interface DeliveryView {
  id: string;
  to: string;
  status: 'queued' | 'sending' | 'sent' | 'failed';
  attempts: number;
  smtpResponse: string | null;
  error: string | null;
  sentAt: string | null;
  createdAt: string;
}

export interface InvoiceView {
  id: string;
  type: InvoiceType;
  number: string | null;
  status: InvoiceStatus;
  customerId: string | null;
  customer: (PartyView & { id: string }) | null;
  items: InvoiceItemView[];
  notes: string | null;
  footerText: string | null;
  customFields: Record<string, string>;
  paymentTermDays: number | null;
  detailsMarkdown: string | null;
  currency: string;
  issueDate: string; // YYYY-MM-DD
  dueDate: string | null;
  serviceDate: string | null;
  /** With serviceDate: the last day of the service period (Leistungszeitraum). */
  serviceEndDate: string | null;
  /** BT-10 of this invoice (else its customer's); BT-13 the buyer's purchase order reference. */
  buyerReference?: string | null;
  orderReference?: string | null;
  totalNet: string;
  totalTax: string;
  totalGross: string;
  taxBreakdown: TaxBreakdownView[];
  amountPaid: string;
  amountDue: string;
  payments: PaymentView[];
  relatedInvoiceId: string | null;
  /** Number of the related invoice (for credit notes: the invoice they reverse). */
  relatedInvoiceNumber?: string | null;
  /** For a cancelled (storniert) invoice: the credit note (gutschrift) that reverses it. */
  creditNoteId?: string | null;
  sentAt: string | null;
  /** E-mail deliveries of this invoice, newest first (single reads only). */
  deliveries?: DeliveryView[];
  /**
   * A document in another currency than EUR: the rate it is converted with (units of the currency
   * per EUR; docs/exchange-rates.md). Set when it is finalized (ECB) or on the draft (manual).
   */
  exchangeRate?: ExchangeRateView | null;
  /** Empty unless a draft has something that would stop it from being sent (an unclassified 0 % line). */
  warnings?: InvoiceWarning[];
  createdAt: string;
  updatedAt: string;
  // Incoming invoices only
  supplierId?: string | null;
  invoiceNumber?: string | null;
  invoiceDate?: string | null;
  source?: string | null;
  externalId?: string | null;
}

/** Everything a document renderer needs: the invoice and who issues it. */
export interface DocumentInput {
  invoice: InvoiceView;
  seller: SellerView;
}
