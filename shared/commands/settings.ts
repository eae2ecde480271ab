import type { PartialModelObject } from 'objection';
import { audit } from '../audit';
import { invalidInput, notFound, unprocessable, type ErrorDetail } from '../errors';
import { dunningSettingsProblems } from '../domain/dunning/levels';
import { encryptJson } from '../crypto/secretBox';
import { isValidVatId, normalizeVatId } from '../domain/vatId';
import { isTaxCountry } from '../domain/tax/vatCategory';
import { isValidBic, isValidIban, normalizeIban } from '../domain/iban';
import { checkPeppolId } from '../domain/peppolId';
import type { EmailTemplates } from '../domain/emailTemplate';
import { currentActor } from '../auth/currentActor';
import { defaultNumberFormat, NUMBERED_TYPES, numberFormatsCanCollide } from '../domain/numbering';
import { sellerFromTenant } from '../queries/invoices';
import { toSettingsView, type SettingsView } from '../queries/settings';
import { Tenant, type DatevSettings, type EinvoiceImportSettings, type TenantSettingsJson } from '../models/Tenant';
import { tenantChart } from '../ledger/accounts';
import { bumpLiveSellerInvoices } from '../documents/liveVersions';
import type { CommandContext } from './types';

/**
 * Changing the tenant settings (the shape is in shared/models/Tenant.ts, the view in
 * shared/queries/settings.ts). Tax portal credentials are write-only: AES-256-GCM encrypted in
 * tenants.portal_credentials_enc, never logged or audited with their values.
 */
export interface PortalCredentials {
  tid: string;
  benid: string;
  pin: string;
  herstellerid: string;
}

export type SettingsUpdate = Partial<Omit<SettingsView, 'portalCredentialsConfigured' | 'templates' | 'datev' | 'einvoiceImport'>> & {
  einvoiceImport?: Partial<EinvoiceImportSettings>;
  templates?: Partial<EmailTemplates>;
  datev?: DatevSettings;
  portalCredentials?: PortalCredentials | null;
};

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
  if (input.peppolId) {
    const checked = checkPeppolId(input.peppolId, 'peppolId');
    if ('details' in checked) details.push(...checked.details);
  }
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

/** The e-invoice import's posting settings merged; the expense account checked like a connector's (shared/commands/connectors.ts). */
async function einvoiceImportSettings(
  trx: CommandContext['trx'],
  tenantId: string,
  stored: EinvoiceImportSettings | undefined,
  input: Partial<EinvoiceImportSettings>,
): Promise<EinvoiceImportSettings> {
  const next: EinvoiceImportSettings = { autoPost: false, expenseAccount: null, ...stored };
  if (input.autoPost !== undefined) next.autoPost = input.autoPost;
  if (input.expenseAccount !== undefined) {
    const number = input.expenseAccount?.trim() || null;
    if (number) {
      // Against the ledger's chart, seeded on first use like a posting would.
      await tenantChart(trx, tenantId);
      const acc = await trx('ledgerAccounts').where({ tenantId, number }).first('kind');
      const message = !acc
        ? `account ${number} does not exist in the chart of accounts`
        : acc.kind !== 'expense'
          ? `account ${number} is not an expense account`
          : null;
      if (message) throw invalidInput('Settings failed validation', [{ field: 'einvoiceImport.expenseAccount', message }]);
    }
    next.expenseAccount = number;
  }
  return next;
}

/**
 * Drafts and incoming invoices show the seller live, so a change of what they show gives them a
 * new version and their documents render anew (shared/documents/liveVersions.ts). The tenant is
 * locked FOR NO KEY UPDATE, not FOR UPDATE: a send holding one of those invoices can still insert
 * rows referencing the tenant and finish instead of deadlocking with us.
 */
export async function updateSettings({ trx, actor: tokenActor }: CommandContext, input: SettingsUpdate): Promise<SettingsView> {
  const actor = await currentActor(trx, tokenActor, 'admin');
  const t = await Tenant.query(trx).where({ id: actor.tenantId }).forNoKeyUpdate().first();
  if (!t) throw notFound('Tenant');
  checkFormats(input, t.settings ?? {});
  const patch: PartialModelObject<Tenant> = {};
  for (const column of ['address', 'email', 'taxNumber', 'country', 'currency', 'plan'] as const) {
    const v = input[column];
    if (v !== undefined) Object.assign(patch, { [column]: typeof v === 'string' ? v.trim() || null : v });
  }
  if (input.companyName !== undefined) patch.name = input.companyName.trim();
  if (input.vatId !== undefined) patch.vatId = input.vatId ? normalizeVatId(input.vatId) : null;
  if (input.iban !== undefined) patch.iban = input.iban ? normalizeIban(input.iban) : null;
  if (input.bic !== undefined) patch.bic = input.bic ? input.bic.trim().toUpperCase() : null;

  const settings: TenantSettingsJson = { ...(t.settings ?? {}) };
  if (input.templates !== undefined) settings.templates = { ...settings.templates, ...input.templates };
  if (input.numberFormats !== undefined) settings.numberFormats = { ...settings.numberFormats, ...input.numberFormats };
  if (input.zugferdByDefault !== undefined) settings.zugferdByDefault = input.zugferdByDefault;
  if (input.smallBusiness !== undefined) settings.smallBusiness = input.smallBusiness;
  const country = input.country ?? t.country;
  if (settings.smallBusiness && !isTaxCountry(country)) {
    throw invalidInput('Settings failed validation', [
      { field: 'smallBusiness', message: `the small-business scheme is supported for AT and DE tenants, not ${country}` },
    ]);
  }
  if (input.datev !== undefined) settings.datev = { ...settings.datev, ...input.datev };
  for (const key of ['contactName', 'contactPhone', 'contactEmail'] as const) {
    const v = input[key];
    if (v !== undefined) settings[key] = typeof v === 'string' ? v.trim() || null : null;
  }
  if (input.contactEmail) settings.contactEmail = input.contactEmail.trim().toLowerCase();
  if (input.dunning !== undefined) {
    // Checked against the country the tenant has after this update: interest needs a known law.
    const problems = dunningSettingsProblems(input.dunning, country);
    if (problems.length) throw unprocessable('Dunning settings refused', undefined, problems);
    settings.dunning = input.dunning;
  } else if (input.country !== undefined && settings.dunning) {
    const problems = dunningSettingsProblems(settings.dunning, country);
    if (problems.length) throw unprocessable('Dunning settings refused for the new country', undefined, problems);
  }
  if (input.peppolId !== undefined) {
    const checked = input.peppolId && checkPeppolId(input.peppolId, 'peppolId');
    settings.peppolId = checked && 'value' in checked ? checked.value : null;
  }
  if (input.einvoiceImport !== undefined)
    settings.einvoiceImport = await einvoiceImportSettings(trx, actor.tenantId, settings.einvoiceImport, input.einvoiceImport);
  patch.settings = settings;

  if (input.portalCredentials !== undefined) {
    patch.portalCredentialsEnc = input.portalCredentials === null ? null : encryptJson(input.portalCredentials);
  }
  const [updated] = await Tenant.query(trx)
    .where({ id: actor.tenantId })
    .patch({ ...patch, updatedAt: trx.fn.now() })
    .returning('*');
  if (JSON.stringify(sellerFromTenant(t)) !== JSON.stringify(sellerFromTenant(updated))) await bumpLiveSellerInvoices(trx, actor.tenantId);
  // Field names only: values may be personal data, and credentials must never reach a log.
  await audit(trx, actor, { action: 'settings.updated', entityType: 'tenant', entityId: actor.tenantId, data: { fields: Object.keys(input).sort() } });
  return toSettingsView(updated);
}
