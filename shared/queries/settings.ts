import type { Db } from '../db';
import { notFound } from '../errors';
import type { Plan } from '../plans';
import type { NumberedType } from '../domain/numbering';
import { effectiveTemplates, type EmailTemplates } from '../domain/emailTemplate';
import { Tenant, type DatevSettings, type EinvoiceImportSettings } from '../models/Tenant';
import { DEFAULT_DUNNING_SETTINGS, type DunningSettings } from '../domain/dunning/levels';

/**
 * Tenant settings as the API shows them. Company data with a column of its own lives in tenants,
 * the rest in tenants.settings (jsonb). Tax portal credentials are write-only: reported only as
 * portalCredentialsConfigured.
 */
export interface SettingsView {
  companyName: string;
  address: string | null;
  email: string | null;
  vatId: string | null;
  taxNumber: string | null;
  iban: string | null;
  bic: string | null;
  country: string;
  currency: string;
  plan: Plan;
  templates: EmailTemplates;
  numberFormats: Partial<Record<NumberedType, string>>;
  zugferdByDefault: boolean;
  smallBusiness: boolean;
  datev: DatevSettings;
  contactName: string | null;
  contactPhone: string | null;
  contactEmail: string | null;
  einvoiceImport: EinvoiceImportSettings;
  peppolId: { scheme: string; id: string } | null;
  dunning: DunningSettings;
  portalCredentialsConfigured: boolean;
}

export function toSettingsView(t: Tenant): SettingsView {
  const s = t.settings ?? {};
  return {
    companyName: t.name,
    address: t.address,
    email: t.email,
    vatId: t.vatId,
    taxNumber: t.taxNumber,
    iban: t.iban,
    bic: t.bic,
    country: t.country,
    currency: t.currency,
    plan: t.plan,
    templates: effectiveTemplates(s.templates),
    numberFormats: s.numberFormats ?? {},
    zugferdByDefault: s.zugferdByDefault ?? false,
    smallBusiness: s.smallBusiness ?? false,
    datev: s.datev ?? {},
    contactName: s.contactName ?? null,
    contactPhone: s.contactPhone ?? null,
    contactEmail: s.contactEmail ?? null,
    einvoiceImport: { autoPost: s.einvoiceImport?.autoPost ?? false, expenseAccount: s.einvoiceImport?.expenseAccount ?? null },
    peppolId: s.peppolId ?? null,
    dunning: s.dunning ?? DEFAULT_DUNNING_SETTINGS,
    portalCredentialsConfigured: !!t.portalCredentialsEnc,
  };
}

export async function getSettings(q: Db, tenantId: string): Promise<SettingsView> {
  const t = await Tenant.query(q).findById(tenantId);
  if (!t) throw notFound('Tenant');
  return toSettingsView(t);
}
