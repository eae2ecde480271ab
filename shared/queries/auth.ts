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
