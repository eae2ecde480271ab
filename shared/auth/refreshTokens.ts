import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { config } from '../config';
import type { Role } from '../actor';
import { User } from '../models/User';
import { now, nowMs } from '../clock';
import { randomToken, sha256Hex } from '../crypto/secretBox';
import { unauthorized } from '../errors';
import { logger } from '../logger';

/**
 * Refresh tokens: 256 random bits, stored only as SHA-256, 7 days. Every refresh spends the
 * presented token and issues a new one in the same family; presenting a spent token again means
 * it was copied, so the whole family is revoked (OAuth 2.0 Security BCP, refresh token rotation).
 */
export interface IssuedRefreshToken {
  token: string;
  familyId: string;
  expiresAt: Date;
}

export async function issueRefreshToken(
  trx: Knex | Knex.Transaction,
  owner: { tenantId: string; userId: string },
  familyId: string = randomUUID(),
): Promise<IssuedRefreshToken> {
  const token = randomToken(32);
  const expiresAt = new Date(nowMs() + config().refreshTtlSec * 1000);
  await trx('refreshTokens').insert({ tenantId: owner.tenantId, userId: owner.userId, familyId, tokenHash: sha256Hex(token), expiresAt });
  return { token, familyId, expiresAt };
}

/** The answer to any refresh token that is not live and unspent. */
export const invalidRefreshToken = () => unauthorized('The refresh token is invalid, expired or revoked; log in again');

export interface RotatedSession {
  user: { id: string; tenantId: string; role: Role; email: string; name: string };
  refresh: IssuedRefreshToken;
}

/**
 * Spend a refresh token and issue its successor. Anything but a live, unspent token is null,
 * not a throw: the caller commits first (a reused token's family revocation must stay) and then
 * answers 401 (invalidRefreshToken).
 */
export async function rotateRefreshToken(trx: Knex.Transaction, token: string | undefined): Promise<RotatedSession | null> {
  if (!token) return null;
  const row = await trx('refreshTokens')
    .where({ tokenHash: sha256Hex(token) })
    .forUpdate()
    .first();
  if (!row || row.revokedAt) return null;
  if (row.usedAt) {
    // Reuse: the family is compromised.
    await trx('refreshTokens').where({ familyId: row.familyId }).whereNull('revokedAt').update({ revokedAt: now() });
    logger.warn({ userId: row.userId, tenantId: row.tenantId, familyId: row.familyId }, 'refresh token reuse detected: family revoked');
    return null;
  }
  if (new Date(row.expiresAt).getTime() <= nowMs()) return null;
  const user = await User.query(trx).where({ id: row.userId, tenantId: row.tenantId }).select('id', 'tenantId', 'role', 'email', 'name', 'active').first();
  if (!user?.active) {
    await trx('refreshTokens').where({ familyId: row.familyId }).whereNull('revokedAt').update({ revokedAt: now() });
    return null;
  }
  await trx('refreshTokens').where({ id: row.id }).update({ usedAt: now() });
  const refresh = await issueRefreshToken(trx, { tenantId: row.tenantId, userId: row.userId }, row.familyId);
  return { user: { id: user.id, tenantId: user.tenantId, role: user.role, email: user.email, name: user.name }, refresh };
}

/** Logout: revoke the family of the presented token (whatever its state). */
export async function revokeRefreshFamily(trx: Knex.Transaction, token: string | undefined): Promise<void> {
  if (!token) return;
  const row = await trx('refreshTokens')
    .where({ tokenHash: sha256Hex(token) })
    .first('familyId');
  if (!row) return;
  await trx('refreshTokens').where({ familyId: row.familyId }).whereNull('revokedAt').update({ revokedAt: now() });
}

/** Revoke every session of a user (deactivation, password change by someone else). */
export async function revokeUserRefreshTokens(trx: Knex | Knex.Transaction, tenantId: string, userId: string): Promise<void> {
  await trx('refreshTokens').where({ tenantId, userId }).whereNull('revokedAt').update({ revokedAt: now() });
}
