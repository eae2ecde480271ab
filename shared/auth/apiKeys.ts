import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { ROLES, type Actor, type Role } from '../actor';
import { safeEqual, sha256Hex } from '../crypto/secretBox';
import { unauthorized } from '../errors';
import { nowMs } from '../clock';
import { logger } from '../logger';

/**
 * API keys: `ak_live_<public id>_<secret>` (docs/auth.md, "API keys").
 * - The fixed prefix lets secret scanners (GitHub secret scanning, gitleaks, trufflehog) find a
 *   leaked key with API_KEY_PATTERN; the public id (12 × base32, 60 bits) finds the row by a
 *   unique index and is shown in lists as `prefix`; the secret is 43 × base62 = 256 random bits.
 * - Stored: SHA-256 of the whole key, as for refresh tokens. A slow hash (argon2) protects
 *   guessable passwords; a 256-bit random secret cannot be guessed, and argon2 on every request
 *   would let anyone burn the API's CPU with made-up keys.
 */
export const API_KEY_PREFIX = 'ak_live_';
export const API_KEY_PATTERN = /^ak_live_([a-z2-7]{12})_([0-9A-Za-z]{43})$/;

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** n characters drawn uniformly from alphabet (rejection sampling: no modulo bias). */
function randomChars(alphabet: string, n: number): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < limit) out += alphabet[b % alphabet.length];
      if (out.length === n) break;
    }
  }
  return out;
}

export interface NewApiKey {
  key: string;
  publicId: string;
  prefix: string;
  secretHash: string;
}

export function generateApiKey(): NewApiKey {
  const publicId = randomChars(BASE32, 12);
  const key = `${API_KEY_PREFIX}${publicId}_${randomChars(BASE62, 43)}`;
  return { key, publicId, prefix: `${API_KEY_PREFIX}${publicId}`, secretHash: sha256Hex(key) };
}

/** Anything that looks like a key (any letter case) is judged as one: a JWT starts with eyJ. */
export const isApiKey = (token: string) => /^ak_/i.test(token);

interface KeyRow {
  id: string;
  tenantId: string;
  role: Role;
  secretHash: string;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** Compared against when no row matches, so an unknown key costs the same hash and comparison. */
const DUMMY_HASH = sha256Hex('ak_live_no-such-key');

/** lastUsedAt is written at most once a minute per key (per process): not a write per request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The actor of a presented key, read from the database on every request: there is no cache, so
 * a revocation or an expiry applies to the very next request on every API process. That is one
 * unique-index read per request, the price of "revoked at once" without cross-process messaging.
 * Unknown, malformed or wrong keys: 401 UNAUTHORIZED "Invalid API key"; revoked or expired keys
 * (only once the secret matched, so nobody learns a key's state without holding it): 401
 * UNAUTHORIZED saying which. Not TOKEN_EXPIRED: that code tells a client to refresh, which a
 * key cannot.
 */
export async function authenticateApiKey(q: Knex, key: string): Promise<Actor & { apiKeyId: string }> {
  const m = API_KEY_PATTERN.exec(key);
  const row: KeyRow | undefined = m
    ? await q('apiKeys').where({ publicId: m[1] }).first('id', 'tenantId', 'role', 'secretHash', 'expiresAt', 'revokedAt', 'lastUsedAt')
    : undefined;
  const matches = safeEqual(sha256Hex(key), row?.secretHash ?? DUMMY_HASH);
  if (!row || !matches || !ROLES.includes(row.role)) throw unauthorized('Invalid API key');
  if (row.revokedAt) throw unauthorized('This API key has been revoked');
  const now = nowMs();
  if (row.expiresAt && new Date(row.expiresAt).getTime() <= now) throw unauthorized('This API key has expired');
  if (!row.lastUsedAt || now - new Date(row.lastUsedAt).getTime() >= LAST_USED_RESOLUTION_MS) await touchLastUsed(q, row.id, row.tenantId);
  return { userId: null, tenantId: row.tenantId, role: row.role, apiKeyId: row.id };
}

/**
 * The conditional update makes concurrent requests of one key (and other API processes) write
 * the row at most once per minute between them; a failure only loses a usage timestamp, never
 * the request.
 */
async function touchLastUsed(q: Knex, id: string, tenantId: string): Promise<void> {
  try {
    await q('apiKeys')
      .where({ id, tenantId })
      .where((w) => w.whereNull('lastUsedAt').orWhere('lastUsedAt', '<', q.raw('now() - make_interval(secs => ?)', [LAST_USED_RESOLUTION_MS / 1000])))
      .update({ lastUsedAt: q.fn.now() });
  } catch (err) {
    logger.warn({ err, apiKeyId: id }, 'could not record the API key use');
  }
}
