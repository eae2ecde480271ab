import { TenantModel } from './BaseModel';
import type { PeppolId } from '../domain/peppolId';
import type { EInvoiceFormat } from '../domain/einvoiceFormats';
import type { CustomerType } from '../domain/dunning/interest';

// What `send` attaches by default (docs/e-invoicing.md); the type is the domain's, which send uses too.
export { type EInvoiceFormat, EINVOICE_FORMATS } from '../domain/einvoiceFormats';

export class Customer extends TenantModel {
  static tableName = 'customers';
  static jsonAttributes = ['peppolId'];

  declare name: string;
  declare company: string | null;
  declare email: string | null;
  declare phone: string | null;
  declare address: string | null;
  declare vatId: string | null;
  declare country: string | null;
  declare currency: string | null;
  declare paymentTermDays: number | null;
  declare color: string | null;
  /** BT-10 default for this customer's invoices (the Leitweg-ID of a German public buyer). */
  declare buyerReference: string | null;
  /** BT-49: the customer's electronic address (Peppol participant id). */
  declare peppolId: PeppolId | null;
  declare einvoiceFormat: EInvoiceFormat | null;
  /** Business or consumer (statutory default interest, docs/dunning.md); null: derived from VAT id / company. */
  declare customerType: CustomerType | null;
  declare createdAt: Date;
  declare updatedAt: Date;
  declare deletedAt: Date | null;
}
