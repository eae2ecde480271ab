import { TenantModel } from './BaseModel';

/** A payment booked on an invoice (a trigger keeps the invoice's amount_paid and version in step). */
export class Payment extends TenantModel {
  static tableName = 'payments';

  declare invoiceId: string;
  /** Decimal string, always positive (a check constraint). */
  declare amount: string;
  /** YYYY-MM-DD. */
  declare date: string;
  declare method: string;
  declare createdBy: string | null;
  declare createdAt: Date;
}
