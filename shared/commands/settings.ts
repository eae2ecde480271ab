import { db } from '../db';
import { audit } from '../audit';
import type { Actor } from '../actor';
import { invalidInput, notFound, type ErrorDetail } from '../errors';
import { encryptJson } from '../crypto/secretBox';
import { isValidVatId, normalizeVatId } from '../domain/vatId';
import { isValidBic, isValidIban, normalizeIban } from '../domain/iban';
import { effectiveTemplates, type EmailTemplates } from '../domain/emailTemplate';
import type { Plan } from '../plans';
import { currentActor } from '../auth/currentActor';
import { defaultNumberFormat, NUMBERED_TYPES, numberFormatsCanCollide } from '../domain/numbering';
import { sellerFromTenant } from '../queries/invoices';
import { bumpLiveSellerInvoices } from '../documents/liveVersions';

/**
 * Tenant settings. Company data with a column of its own (name, address, e-mail, vatId,
 * taxNumber, iban, bic, country, currency, plan) lives in tenants; the rest in tenants.settings
 * (jsonb): templates, numberFormats, zugferdByDefault, datev. Tax portal credentials are
 * write-only: AES-256-GCM encrypted in tenants.portal_credentials_enc, reported only as
 * portalCredentialsConfigured, never logged or audited with their values.
 */
export type InvoiceNumberType = 'rechnung' | 'angebot' | 'gutschrift';

export interface DatevSettings {
  consultantNumber?: string;
  clientNumber?: string;
  chart?: 'SKR03' | 'SKR04' | 'EKR';
}

/** Shape of tenants.settings. Other features read these keys. */
export interface TenantSettingsJson {
  templates?: Partial<EmailTemplates>;
  numberFormats?: Partial<Record<InvoiceNumberType, string>>;
  zugferdByDefault?: boolean;
  datev?: DatevSettings;
}

export interface PortalCredentials {
  tid: string;
  benid: string;
  pin: string;
  herstellerid: string;
}

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
  numberFormats: Partial<Record<InvoiceNumberType, string>>;
  zugferdByDefault: boolean;
  datev: DatevSettings;
  portalCredentialsConfigured: boolean;
}

export type SettingsUpdate = Partial<Omit<SettingsView, 'portalCredentialsConfigured' | 'templates' | 'datev'>> & {
  templates?: Partial<EmailTemplates>;
  datev?: DatevSettings;
  portalCredentials?: PortalCredentials | null;
};

function toView(t: Record<string, any>): SettingsView {
  const s = (t.settings ?? {}) as TenantSettingsJson;
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
    datev: s.datev ?? {},
    portalCredentialsConfigured: !!t.portalCredentialsEnc,
  };
}

export async function getSettings(actor: Actor): Promise<SettingsView> {
  const t = await db()('tenants').where({ id: actor.tenantId }).first();
  if (!t) throw notFound('Tenant');
  return toView(t);
}

/**
 * Checks JSON Schema cannot express (checksums, per-country formats, number formats against each
 * other and the stored ones); all problems at once.
 */
function checkFormats(input: SettingsUpdate, stored: TenantSettingsJson): void {
  const details: ErrorDetail[] = [...numberFormatCollisions(input.numberFormats, stored.numberFormats)];
  if (input.vatId && !isValidVatId(input.vatId)) {
    details.push({ field: 'vatId', message: 'must be an EU VAT ID, e.g. ATU12345678 or DE123456789' });
  }
  if (input.iban && !isValidIban(input.iban)) details.push({ field: 'iban', message: 'must be a valid IBAN (checksum failed)' });
  if (input.bic && !isValidBic(input.bic)) details.push({ field: 'bic', message: 'must be a valid BIC (8 or 11 characters)' });
  if (details.length) throw invalidInput('Settings failed validation', details);
}

/**
 * Invoice numbers must be unique across types (§ 11 Abs 1 Z 3 UStG AT, § 14 Abs 4 Nr 4 UStG DE),
 * but each type counts on its own. Each format sent is compared (numberFormatsCanCollide()) with
 * the other types' formats as they will be after this update, defaults included; stored pairs the
 * request does not touch are not judged (docs/invoices.md, "Numbering").
 */
function numberFormatCollisions(sent: SettingsUpdate['numberFormats'], stored: TenantSettingsJson['numberFormats']): ErrorDetail[] {
  if (!sent) return [];
  const effective = Object.fromEntries(NUMBERED_TYPES.map((t) => [t, sent[t] ?? stored?.[t] ?? defaultNumberFormat(t)]));
  const details: ErrorDetail[] = [];
  for (const type of NUMBERED_TYPES) {
    if (sent[type] === undefined) continue;
    for (const other of NUMBERED_TYPES) {
      if (other === type || !numberFormatsCanCollide(effective[type], effective[other])) continue;
      const which = sent[other] !== undefined ? 'as sent' : stored?.[other] ? 'as saved' : 'its default';
      details.push({
        field: `numberFormats.${type}`,
        message:
          `could give the same number as numberFormats.${other} (${effective[other]}, ${which}): numbers must be unique across types, ` +
          'so the formats must differ in their letters or symbols (. _ / -), or in a character at the same place counted from the start before the counter or from the end after it',
      });
    }
  }
  return details;
}

/**
 * Drafts and incoming invoices show the seller live, so a change of what they show gives them a
 * new version and their documents render anew (shared/documents/liveVersions.ts). The tenant is
 * locked FOR NO KEY UPDATE, not FOR UPDATE: a send holding one of those invoices can still insert
 * rows referencing the tenant and finish instead of deadlocking with us.
 */
export async function updateSettings(tokenActor: Actor, input: SettingsUpdate): Promise<SettingsView> {
  return db().transaction(async (trx) => {
    const actor = await currentActor(trx, tokenActor, 'admin');
    const t = await trx('tenants').where({ id: actor.tenantId }).forNoKeyUpdate().first();
    if (!t) throw notFound('Tenant');
    checkFormats(input, t.settings ?? {});
    const patch: Record<string, unknown> = {};
    const columns = { address: 'address', email: 'email', taxNumber: 'taxNumber', country: 'country', currency: 'currency', plan: 'plan' } as const;
    for (const [field, column] of Object.entries(columns)) {
      const v = input[field as keyof typeof columns];
      if (v !== undefined) patch[column] = typeof v === 'string' ? v.trim() || null : v;
    }
    if (input.companyName !== undefined) patch.name = input.companyName.trim();
    if (input.vatId !== undefined) patch.vatId = input.vatId ? normalizeVatId(input.vatId) : null;
    if (input.iban !== undefined) patch.iban = input.iban ? normalizeIban(input.iban) : null;
    if (input.bic !== undefined) patch.bic = input.bic ? input.bic.trim().toUpperCase() : null;

    const settings: TenantSettingsJson = { ...(t.settings ?? {}) };
    if (input.templates !== undefined) settings.templates = { ...settings.templates, ...input.templates };
    if (input.numberFormats !== undefined) settings.numberFormats = { ...settings.numberFormats, ...input.numberFormats };
    if (input.zugferdByDefault !== undefined) settings.zugferdByDefault = input.zugferdByDefault;
    if (input.datev !== undefined) settings.datev = { ...settings.datev, ...input.datev };
    patch.settings = JSON.stringify(settings);

    if (input.portalCredentials !== undefined) {
      patch.portalCredentialsEnc = input.portalCredentials === null ? null : encryptJson(input.portalCredentials);
    }
    const [updated] = await trx('tenants')
      .where({ id: actor.tenantId })
      .update({ ...patch, updatedAt: trx.fn.now() })
      .returning('*');
    if (JSON.stringify(sellerFromTenant(t)) !== JSON.stringify(sellerFromTenant(updated))) await bumpLiveSellerInvoices(trx, actor.tenantId);
    // Field names only: values may be personal data, and credentials must never reach a log.
    await audit(trx, actor, { action: 'settings.updated', entityType: 'tenant', entityId: actor.tenantId, data: { fields: Object.keys(input).sort() } });
    return toView(updated);
  });
}
