import type { Knex } from 'knex';
import { config } from '../config';
import { decryptSecret } from '../crypto/secretBox';
import { notFound } from '../errors';
import { isProviderSlug, type ProviderSlug } from '../providers/payments';
import type { ConnectorSettings } from '../domain/connectorSettings';
import { applyKeyset, decodeCursor, keyColumns, keysetOrder, nextCursorOf, type Keyset } from './cursor';

/** Reads of payment-provider connectors and their webhook log (the commands: shared/commands/connectors.ts). */
export function slugOrNotFound(slug: string): ProviderSlug {
  if (!isProviderSlug(slug)) throw notFound('Connector');
  return slug;
}

export const webhookUrlFor = (slug: ProviderSlug, token: string) => `${config().publicBaseUrl.replace(/\/+$/, '')}/api/payment-import/${slug}/${token}`;

export interface ConnectorView {
  provider: ProviderSlug;
  active: boolean;
  webhookUrl: string;
  settings: Required<ConnectorSettings>;
  installedAt: string;
  updatedAt: string;
}

export const DEFAULT_SETTINGS: Required<ConnectorSettings> = { autoPost: false, defaultSupplierId: null, expenseAccount: null, clearingAccount: null };

/** A connector_installations row as these commands read it (the secrets stay encrypted, unread). */
export interface InstallationRecord {
  id: string;
  tenantId: string;
  provider: ProviderSlug;
  active: boolean;
  tokenHash: string;
  tokenEnc: string;
  settings: ConnectorSettings | null;
  createdAt: Date;
  updatedAt: Date;
}

export function toView(row: InstallationRecord): ConnectorView {
  return {
    provider: row.provider,
    active: row.active,
    webhookUrl: webhookUrlFor(row.provider, decryptSecret(row.tokenEnc)),
    settings: { ...DEFAULT_SETTINGS, ...(row.settings ?? {}) },
    installedAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}

export async function activeInstallation(k: Knex | Knex.Transaction, tenantId: string, slug: ProviderSlug, lock = false): Promise<InstallationRecord> {
  let q = k('connectorInstallations').where({ tenantId, provider: slug, active: true });
  if (lock) q = q.forUpdate();
  const row: InstallationRecord | undefined = await q.first();
  if (!row) throw notFound('Connector installation');
  return row;
}

export async function getConnector(k: Knex, tenantId: string, slugRaw: string): Promise<ConnectorView> {
  return toView(await activeInstallation(k, tenantId, slugOrNotFound(slugRaw)));
}

export interface WebhookLogEntry {
  id: string;
  provider: string;
  event: string | null;
  status: string;
  externalId: string | null;
  receivedAt: string;
  processedAt: string | null;
}

/** The webhook log's order: newest received first, then id (unique). */
export const WEBHOOK_LOG_KEYSET: Keyset = {
  tag: 'webhook-logs',
  columns: [
    { column: 'received_at', type: 'timestamp' },
    { column: 'id', type: 'uuid' },
  ],
  desc: true,
};

/**
 * The tenant's log rows for one provider, newest first (every installation, also uninstalled
 * ones), after `cursor` when given (docs/lists.md: webhook_events_log_idx answers it as a range),
 * and the cursor after this page when more follow. No total: the contract's bare array has none,
 * so no counter burdens the webhook intake.
 */
export async function listWebhookLogs(
  k: Knex,
  tenantId: string,
  slugRaw: string,
  page: { limit: number; cursor?: string },
): Promise<{ data: WebhookLogEntry[]; nextCursor: string | null }> {
  const slug = slugOrNotFound(slugRaw);
  const q = k('webhookEvents').where({ tenantId, provider: slug });
  if (page.cursor !== undefined) applyKeyset(q, WEBHOOK_LOG_KEYSET, decodeCursor(WEBHOOK_LOG_KEYSET, page.cursor));
  const rows = await q
    .orderBy(keysetOrder(WEBHOOK_LOG_KEYSET))
    .limit(page.limit + 1)
    .select('id', 'provider', 'event', 'status', 'externalId', 'receivedAt', 'processedAt', k.raw(keyColumns(WEBHOOK_LOG_KEYSET)));
  const data = rows.slice(0, page.limit).map((r) => ({
    id: r.id,
    provider: r.provider,
    event: r.event ?? null,
    status: r.status,
    externalId: r.externalId ?? null,
    receivedAt: new Date(r.receivedAt).toISOString(),
    processedAt: r.processedAt ? new Date(r.processedAt).toISOString() : null,
  }));
  return { data, nextCursor: nextCursorOf(WEBHOOK_LOG_KEYSET, rows, page.limit) };
}
