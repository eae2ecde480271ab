import { TenantModel } from './BaseModel';

/** A supplier of incoming invoices; the webhook pipeline matches it by its payment providers' merchant ids. */
export class Supplier extends TenantModel {
  static tableName = 'suppliers';
  // jsonb: objection stringifies it on the way in (pg would not).
  static jsonAttributes = ['merchantIds'];

  declare name: string;
  declare email: string | null;
  declare vatId: string | null;
  declare address: string | null;
  declare iban: string | null;
  declare country: string | null;
  /** Provider slug → the supplier's merchant id there. */
  declare merchantIds: Record<string, string>;
  /** The expense account its incoming invoices are booked to (null: the chart's default). */
  declare defaultExpenseAccount: string | null;
  declare createdAt: Date;
  declare updatedAt: Date;
  declare deletedAt: Date | null;
}
