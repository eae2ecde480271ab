import { TenantModel } from './BaseModel';
import type { TaxCategory } from '../domain/tax/vatCategory';

/** One line of an invoice; positions run 1..N in the order the client sent the items. Money and quantities are decimal strings. */
export class InvoiceItem extends TenantModel {
  static tableName = 'invoice_items';

  declare invoiceId: string;
  declare position: number;
  declare description: string;
  declare unit: string | null;
  declare quantity: string;
  declare unitPrice: string;
  declare taxRate: string;
  declare netAmount: string;
  declare taxAmount: string;
  declare grossAmount: string;
  /** The line's VAT situation (docs/vat-categories.md); null: a 0 % line not yet classified (a draft). */
  declare taxCategory: TaxCategory | null;
  declare exemptionReason: string | null;
  declare exemptionNote: string | null;
  /** The client named the category; an inferred one is inferred again from the facts at send. */
  declare taxCategoryGiven: boolean;
}
