import { audit } from '../audit';
import { encryptJson, encryptSecret, randomToken, sha256Hex } from '../crypto/secretBox';
import { invalidInput, notFound, type ErrorDetail } from '../errors';
import { getAdapter, type ProviderSecrets, type ProviderSlug } from '../providers/payments';
import { seedChartOfAccounts } from '../ledger/accounts';
import type { ConnectorSettings } from '../domain/connectorSettings';
import type { CommandContext } from './types';
import { onCommit } from '../outbox';
import { invalidateInstallationCache } from '../queries/connectorInstallations';
import {
  activeInstallation,
  DEFAULT_SETTINGS,
  type ConnectorView,
  type InstallationRecord,
  slugOrNotFound,
  toView,
  webhookUrlFor,
} from '../queries/connectors';
import { Supplier } from '../models/Supplier';

/**
 * Payment-provider connectors (docs/webhooks.md, "Endpoints"). One active installation
 * per tenant and provider (partial unique index). The URL token is 32 random bytes; it is stored
 * as SHA-256 for lookup and AES-GCM encrypted for display, never in clear. Secrets are stored
 * encrypted and never returned.
 */
export const SECRET_FIELDS: readonly (keyof ProviderSecrets)[] = ['webhookSecret', 'webhookId', 'apiKey', 'signingSecret'];

function checkSecrets(slug: ProviderSlug, input: ProviderSecrets): ProviderSecrets {
  const { required, optional } = getAdapter(slug).secretFields;
  const details: ErrorDetail[] = [];
  const out: ProviderSecrets = {};
  for (const f of SECRET_FIELDS) {
    // Trimmed before the check: "   " is no secret (it was stored as "", and every real delivery
    // then failed its signature check behind a 201 and a working-looking URL).
    const v = input[f]?.trim();
    if (!v) {
      if (required.includes(f)) details.push({ field: f, message: `is required for ${slug}` });
      continue;
    }
    if (!required.includes(f) && !optional.includes(f)) details.push({ field: f, message: `is not used by ${slug}` });
    else out[f] = v;
  }
  if (details.length) throw invalidInput('Connector secrets failed validation', details);
  return out;
}

/**
 * Install, or reinstall (rotating the token and replacing the secrets: the old URL answers 404 at
 * once). A re-install after an uninstall starts a new installation and carries the previous
 * installation's settings over. Seeds the tenant's chart of accounts on first install.
 */
export async function installConnector(
  { trx, actor }: CommandContext,
  slugRaw: string,
  input: ProviderSecrets,
): Promise<{ webhookUrl: string; token: string }> {
  const slug = slugOrNotFound(slugRaw);
  const secrets = checkSecrets(slug, input);
  const tenantId = actor.tenantId;
  const tenant = await trx('tenants').where({ id: tenantId }).forUpdate().first('country');
  if (!tenant) throw notFound('Tenant');
  await seedChartOfAccounts(trx, tenantId, tenant.country);

  const token = randomToken(32);
  const values = { tokenHash: sha256Hex(token), tokenEnc: encryptSecret(token), secretsEnc: encryptJson(secrets), updatedAt: trx.fn.now() };
  const current = await trx('connectorInstallations').where({ tenantId, provider: slug, active: true }).forUpdate().first('id');
  let id: string;
  if (current) {
    await trx('connectorInstallations').where({ tenantId, id: current.id }).update(values);
    id = current.id;
  } else {
    const previous = await trx('connectorInstallations').where({ tenantId, provider: slug }).orderBy('updatedAt', 'desc').first('settings');
    const [row] = await trx('connectorInstallations')
      .insert({ ...values, tenantId, provider: slug, active: true, settings: JSON.stringify(previous?.settings ?? {}) })
      .returning('id');
    id = row.id;
  }
  // The rotated token must be 404 at once on this process (other processes: within TOKEN_CACHE_MS).
  onCommit(trx, invalidateInstallationCache);
  await audit(trx, actor, {
    action: current ? 'connector.reinstalled' : 'connector.installed',
    entityType: 'connector',
    entityId: id,
    data: { provider: slug },
  });
  return { webhookUrl: webhookUrlFor(slug, token), token };
}

/** Uninstall: the installation stays for the log's history but is inactive, so its URL is 404. */
export async function uninstallConnector({ trx, actor }: CommandContext, slugRaw: string): Promise<void> {
  const slug = slugOrNotFound(slugRaw);
  const row = await activeInstallation(trx, actor.tenantId, slug, true);
  await trx('connectorInstallations').where({ tenantId: actor.tenantId, id: row.id }).update({ active: false, updatedAt: trx.fn.now() });
  onCommit(trx, invalidateInstallationCache);
  await audit(trx, actor, { action: 'connector.uninstalled', entityType: 'connector', entityId: row.id, data: { provider: slug } });
}

/**
 * Partial update of the settings. References are checked here, so the pipeline does not meet a
 * bad one later: the default supplier must be an active supplier of the tenant, the expense
 * account an expense account and the clearing account an asset account of its chart.
 */
export async function updateConnectorSettings({ trx, actor }: CommandContext, slugRaw: string, input: ConnectorSettings): Promise<ConnectorView> {
  const slug = slugOrNotFound(slugRaw);
  const tenantId = actor.tenantId;
  const row = await activeInstallation(trx, tenantId, slug, true);
  const details: ErrorDetail[] = [];
  if (input.defaultSupplierId) {
    const s = await Supplier.query(trx).where({ tenantId, id: input.defaultSupplierId }).whereNull('deletedAt').select('id').first();
    if (!s) details.push({ field: 'defaultSupplierId', message: 'supplier does not exist' });
  }
  const checkAccount = async (field: 'expenseAccount' | 'clearingAccount', kind: string) => {
    const number = input[field];
    if (!number) return;
    const acc = await trx('ledgerAccounts').where({ tenantId, number }).first('kind');
    if (!acc) details.push({ field, message: `account ${number} does not exist in the chart of accounts` });
    else if (acc.kind !== kind) details.push({ field, message: `account ${number} is not an ${kind} account` });
  };
  await checkAccount('expenseAccount', 'expense');
  await checkAccount('clearingAccount', 'asset');
  if (details.length) throw invalidInput('Connector settings failed validation', details);

  const next: ConnectorSettings = { ...DEFAULT_SETTINGS, ...(row.settings ?? {}) };
  for (const k of Object.keys(DEFAULT_SETTINGS) as (keyof ConnectorSettings)[]) {
    if (k in input) (next as Record<string, unknown>)[k] = input[k] === '' ? null : input[k];
  }
  const [updated]: InstallationRecord[] = await trx('connectorInstallations')
    .where({ tenantId: actor.tenantId, id: row.id })
    .update({ settings: JSON.stringify(next), updatedAt: trx.fn.now() })
    .returning('*');
  await audit(trx, actor, {
    action: 'connector.settings_updated',
    entityType: 'connector',
    entityId: row.id,
    data: { provider: slug, fields: Object.keys(input) },
  });
  return toView(updated);
}
