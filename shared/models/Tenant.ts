import { BaseModel } from './BaseModel';
import type { Plan } from '../plans';
import type { EmailTemplates } from '../domain/emailTemplate';
import type { NumberedType } from '../domain/numbering';
import type { DunningSettings } from '../domain/dunning/levels';

export interface DatevSettings {
  consultantNumber?: string;
  clientNumber?: string;
  chart?: 'SKR03' | 'SKR04' | 'EKR';
}

/** Shape of tenants.settings (jsonb): what has no column of its own. Other features read these keys. */
export interface TenantSettingsJson {
  templates?: Partial<EmailTemplates>;
  numberFormats?: Partial<Record<NumberedType, string>>;
  zugferdByDefault?: boolean;
  /** Small-business scheme (AT § 6 Abs. 1 Z 27, DE § 19 UStG): sales lines are exempt, no VAT charged (docs/vat-categories.md). */
  smallBusiness?: boolean;
  datev?: DatevSettings;
  /** The seller contact of e-invoices (BT-41/42/43; XRechnung requires all three: BR-DE-5/6/7). */
  contactName?: string | null;
  contactPhone?: string | null;
  contactEmail?: string | null;
  /** The seller's electronic address (BT-34); without it e-invoices derive one from the VAT ID. */
  peppolId?: { scheme: string; id: string } | null;
  /** Posting of imported e-invoices to the ledger (docs/ledger.md, "Imported e-invoices"). */
  einvoiceImport?: EinvoiceImportSettings;
  /** Dunning levels and whether the daily run issues them (docs/dunning.md). */
  dunning?: DunningSettings;
}

export interface EinvoiceImportSettings {
  autoPost: boolean;
  /** The expense account when neither the supplier's default nor its history decides. */
  expenseAccount: string | null;
}

/** A tenant (the company that uses the service) and its settings (docs/auth.md, "Registration"). */
export class Tenant extends BaseModel {
  static tableName = 'tenants';
  // jsonb: objection stringifies it on the way in and hands back the parsed object.
  static jsonAttributes = ['settings'];

  declare id: string;
  declare name: string;
  declare country: string;
  declare vatId: string | null;
  declare taxNumber: string | null;
  declare address: string | null;
  declare email: string | null;
  declare iban: string | null;
  declare bic: string | null;
  declare plan: Plan;
  declare currency: string;
  declare settings: TenantSettingsJson;
  /** Tax portal credentials, AES-256-GCM encrypted (shared/crypto/secretBox.ts); never returned. */
  declare portalCredentialsEnc: string | null;
  declare createdAt: Date;
  declare updatedAt: Date;
}
