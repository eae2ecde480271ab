import { TenantModel } from './BaseModel';

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
}
