import { Model, type RelationMappings } from 'objection';
import { TenantModel } from './BaseModel';
import { InvoiceItem } from './InvoiceItem';
import { Payment } from './Payment';
import type { InvoiceStatus, InvoiceType, SellerView, TaxBreakdownView } from '../domain/invoiceView';

/** What a finalized invoice freezes about its customer (customers.ts and the purge write it, the view shows it). */
export interface CustomerSnapshot {
  id: string;
  name: string;
  company: string | null;
  email: string | null;
  phone: string | null;
  address: string | null;
  vatId: string | null;
  country: string | null;
  /** E-invoice data of the customer as issued (absent on snapshots taken before they existed). */
  buyerReference?: string | null;
  peppolId?: { scheme: string; id: string } | null;
}

/**
 * An invoice of any type (rechnung, angebot, gutschrift, eingangsrechnung) with its items and
 * payments (docs/invoices.md). Money columns are decimal strings, dates YYYY-MM-DD strings.
 * Statuses change only through assertTransition() in the commands.
 */
export class Invoice extends TenantModel {
  static tableName = 'invoices';
  // jsonb: objection stringifies these on the way in (pg would turn an array into a PostgreSQL array).
  static jsonAttributes = ['customerSnapshot', 'sellerSnapshot', 'customFields', 'taxBreakdown'];

  static get relationMappings(): RelationMappings {
    return {
      items: { relation: Model.HasManyRelation, modelClass: InvoiceItem, join: { from: 'invoices.id', to: 'invoice_items.invoiceId' } },
      payments: { relation: Model.HasManyRelation, modelClass: Payment, join: { from: 'invoices.id', to: 'payments.invoiceId' } },
    };
  }

  declare type: InvoiceType;
  declare status: InvoiceStatus;
  /** Our gapless number, set when a sales document is finalized (null on drafts and incoming invoices). */
  declare number: string | null;
  declare customerId: string | null;
  declare supplierId: string | null;
  declare customerSnapshot: CustomerSnapshot | null;
  declare sellerSnapshot: SellerView | null;
  declare currency: string;
  declare issueDate: string;
  declare serviceDate: string | null;
  /** Last day of the service period that starts on serviceDate (null: a single day). */
  declare serviceEndDate: string | null;
  /** BT-10 (overrides the customer's) and BT-13; set on drafts, frozen with the invoice. */
  declare buyerReference: string | null;
  declare orderReference: string | null;
  declare dueDate: string | null;
  declare paymentTermDays: number | null;
  declare notes: string | null;
  declare footerText: string | null;
  declare customFields: Record<string, string>;
  declare detailsMarkdown: string | null;
  declare totalNet: string;
  declare totalTax: string;
  declare totalGross: string;
  declare amountPaid: string;
  declare taxBreakdown: TaxBreakdownView[];
  /** A credit note's corrected invoice, or the quote a draft was converted from. */
  declare relatedInvoiceId: string | null;
  /** The credit note that cancelled this invoice. */
  declare creditNoteId: string | null;
  /** An incoming invoice's number and date as the supplier issued them. */
  declare invoiceNumber: string | null;
  declare invoiceDate: string | null;
  /** Incoming invoices from the webhook pipeline: provider slug and money movement id. */
  declare source: string | null;
  declare externalId: string | null;
  /** Foreign-currency documents: units of the currency per EUR, its date and source (docs/exchange-rates.md). */
  declare exchangeRate: string | null;
  declare exchangeRateDate: string | null;
  declare exchangeRateSource: 'ecb' | 'manual' | null;
  declare version: number;
  declare viewRevision: number;
  declare createdBy: string | null;
  declare sentAt: Date | null;
  declare finalizedAt: Date | null;
  declare cancelledAt: Date | null;
  declare createdAt: Date;
  declare updatedAt: Date;
  declare deletedAt: Date | null;

  declare items?: InvoiceItem[];
  declare payments?: Payment[];
}
