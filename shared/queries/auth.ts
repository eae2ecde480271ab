import type { Db } from '../db';
import { User } from '../models/User';
import { verifyChallengeToken, type SecondFactor } from '../auth/challengeToken';

/** Reads of the login and the second factors (docs/auth.md). Writes are in shared/commands/{login,twoFactor,webauthn}.ts. */

/** The user with this e-mail, in any tenant: e-mails are unique service-wide, case-insensitive. */
export const findUserByEmail = async (q: Db, email: string): Promise<User | undefined> =>
  User.query(q).whereRaw('lower(email) = ?', [email.trim().toLowerCase()]).first();

/** The active user a second-factor challenge token names; undefined when the user is gone or deactivated. 401 for a bad token. */
export async function challengeUser(q: Db, challengeToken: string): Promise<User | undefined> {
  const c = verifyChallengeToken(challengeToken);
  return User.query(q).where({ id: c.userId, tenantId: c.tenantId, active: true }).first();
}

export const emailInUse = async (q: Db, email: string): Promise<boolean> =>
  Boolean(await q('users').whereRaw('lower(email) = ?', [email.trim().toLowerCase()]).first('id'));

/** The second factors a user has set up, in the order the login answer lists them. */
export async function secondFactorsOf(q: Db, user: Pick<User, 'id' | 'tenantId' | 'totpEnabled' | 'recoveryCodes'>): Promise<SecondFactor[]> {
  const methods: SecondFactor[] = [];
  if (user.totpEnabled) methods.push('totp');
  if ((await countPasskeys(q, user.tenantId, user.id)) > 0) methods.push('webauthn');
  if (methods.length && Array.isArray(user.recoveryCodes) && user.recoveryCodes.length) methods.push('recovery');
  return methods;
}

export async function countPasskeys(q: Db, tenantId: string, userId: string): Promise<number> {
  const row = await q('webauthnCredentials').where({ tenantId, userId }).count<{ n: number }[]>({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/** A webauthn_credentials row. */
export interface PasskeyRow {
  id: string;
  tenantId: string;
  userId: string;
  credentialId: string;
  publicKey: Buffer;
  counter: number;
  transports: string[];
  deviceType: string | null;
  backedUp: boolean | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A passkey as the API shows it: never its public key or counter. */
export interface PasskeyView {
  id: string;
  credentialId: string;
  deviceType: string | null;
  backedUp: boolean | null;
  createdAt: string;
}

export const passkeyView = (r: Pick<PasskeyRow, 'id' | 'credentialId' | 'deviceType' | 'backedUp' | 'createdAt'>): PasskeyView => ({
  id: r.id,
  credentialId: r.credentialId,
  deviceType: r.deviceType,
  backedUp: r.backedUp,
  createdAt: new Date(r.createdAt).toISOString(),
});

export async function listPasskeys(q: Db, tenantId: string, userId: string): Promise<PasskeyView[]> {
  const rows: PasskeyRow[] = await q('webauthnCredentials').where({ tenantId, userId }).orderBy('createdAt');
  return rows.map(passkeyView);
}

/** The credential ids (and transports) of a user's passkeys, for allowCredentials / excludeCredentials. */
export const passkeyDescriptors = (q: Db, tenantId: string, userId: string): Promise<Pick<PasskeyRow, 'credentialId' | 'transports'>[]> =>
  q('webauthnCredentials').where({ tenantId, userId }).select('credentialId', 'transports');

/** A session as GET /api/auth/sessions shows it: one refresh-token family, never a token. */
export interface SessionView {
  id: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  current: boolean;
}

/**
 * The user's live sessions, newest first: families whose latest token is unspent, unrevoked and
 * unexpired. createdAt is the login, lastUsedAt the latest refresh. `current` marks the family of
 * the refresh cookie the request carried (the cookie's path covers /api/auth).
 */
export async function listSessions(q: Db, tenantId: string, userId: string, currentFamilyId: string | null, at: Date): Promise<SessionView[]> {
  const rows: { familyId: string; createdAt: Date; lastUsedAt: Date; expiresAt: Date }[] = await q('refreshTokens as live')
    .where({ 'live.tenantId': tenantId, 'live.userId': userId })
    .whereNull('live.usedAt')
    .whereNull('live.revokedAt')
    .where('live.expiresAt', '>', at)
    .select(
      'live.familyId',
      q.raw('(select min(f.created_at) from refresh_tokens f where f.family_id = live.family_id and f.tenant_id = live.tenant_id) as "createdAt"'),
      'live.createdAt as lastUsedAt',
      'live.expiresAt',
    )
    .orderBy('live.createdAt', 'desc');
  return rows.map((r) => ({
    id: r.familyId,
    createdAt: new Date(r.createdAt).toISOString(),
    lastUsedAt: new Date(r.lastUsedAt).toISOString(),
    expiresAt: new Date(r.expiresAt).toISOString(),
    current: r.familyId === currentFamilyId,
  }));
}

/** The family of a refresh token (the request's cookie), or null. */
export async function refreshFamilyOf(q: Db, tokenHash: string | null): Promise<string | null> {
  if (!tokenHash) return null;
  const row = await q('refreshTokens').where({ tokenHash }).first('familyId');
  return row?.familyId ?? null;
}
