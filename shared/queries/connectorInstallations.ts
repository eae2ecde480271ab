import type { Knex } from 'knex';
import { db } from '../db';
import { sha256Hex } from '../crypto/secretBox';
import { isProviderSlug, type ProviderSecrets, type ProviderSlug } from '../providers/payments';

/**
 * Connector installations looked up by their webhook URL token, and the per-process cache of that
 * lookup. Here, below both of its users: the webhook ingest (shared/webhooks/ingest.ts) reads
 * through the cache, and the connector commands (shared/commands/connectors.ts) invalidate it
 * when an install rotates the token or an uninstall retires it.
 */
export interface InstallationRow {
  id: string;
  tenantId: string;
  provider: ProviderSlug;
  secretsEnc: string;
  settings: Record<string, unknown>;
}

/** The active installation a URL token belongs to (looked up by the token's SHA-256). */
export async function findInstallationByToken(k: Knex | Knex.Transaction, provider: string, token: string): Promise<InstallationRow | undefined> {
  if (!isProviderSlug(provider) || !token) return undefined;
  return k('connectorInstallations')
    .where({ tokenHash: sha256Hex(token), provider, active: true })
    .first();
}

/**
 * Per-process cache of the token lookup and decrypted secrets, so a delivery does not pay a query
 * and an AES-GCM decrypt before verifying anything. Only found installations are cached; install
 * and uninstall call invalidateInstallationCache() after commit (other processes: within the TTL),
 * and a lookup that started before an invalidation is not stored (docs/webhooks.md, "Token cache").
 */
export const TOKEN_CACHE_MS = 5_000;
const TOKEN_CACHE_MAX = 10_000;
export interface CachedInstallation {
  installation: InstallationRow;
  /** Decrypted on first use (a decrypt error stays in the verification's error handling). */
  secrets?: ProviderSecrets;
  expires: number;
}
const tokenCache = new Map<string, CachedInstallation>();
let tokenCacheGeneration = 0;

export function invalidateInstallationCache(): void {
  tokenCacheGeneration++;
  tokenCache.clear();
}

export async function cachedInstallation(provider: string, token: string): Promise<CachedInstallation | undefined> {
  if (!isProviderSlug(provider) || !token) return undefined;
  const key = `${provider}:${sha256Hex(token)}`;
  const hit = tokenCache.get(key);
  const now = Date.now();
  if (hit && hit.expires > now) return hit;
  if (hit) tokenCache.delete(key);
  const generation = tokenCacheGeneration;
  const installation = await findInstallationByToken(db(), provider, token);
  if (!installation) return undefined;
  const entry: CachedInstallation = { installation, expires: now + TOKEN_CACHE_MS };
  if (generation === tokenCacheGeneration) {
    if (tokenCache.size >= TOKEN_CACHE_MAX) tokenCache.clear();
    tokenCache.set(key, entry);
  }
  return entry;
}
