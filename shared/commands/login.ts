import { db } from '../db';
import { now } from '../clock';
import { audit } from '../audit';
import { unauthorized } from '../errors';
import type { Role } from '../actor';
import { signAccessToken } from '../auth/accessToken';
import { dummyPasswordHash, verifyPassword } from '../auth/passwords';
import { claimAttempt, claimUnknownLoginAttempt, releaseAttempt } from '../auth/lockout';
import { issueRefreshToken, type IssuedRefreshToken } from '../auth/refreshTokens';
import { signChallengeToken, type SecondFactor } from '../auth/challengeToken';

/** The User object of the spec (returned by login): nothing else ever leaves the service. */
export interface PublicUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  tenantId: string;
}

export const publicUser = (u: PublicUser): PublicUser => ({ id: u.id, email: u.email, name: u.name, role: u.role, tenantId: u.tenantId });

export interface Session {
  token: string;
  refresh: IssuedRefreshToken;
  user: PublicUser;
}

export interface TwoFactorChallenge {
  twoFactorRequired: true;
  challengeToken: string;
  methods: SecondFactor[];
}

/** One message for unknown e-mail, wrong password and deactivated user: no account enumeration. */
export const invalidCredentials = () => unauthorized('Invalid e-mail or password');

export const findUserByEmail = (email: string) => db()('users').whereRaw('lower(email) = ?', [email.trim().toLowerCase()]).first();

/** The second factors a user has set up, in the order the login answer lists them. */
export async function secondFactorsOf(user: { id: string; tenantId: string; totpEnabled: boolean; recoveryCodes: unknown }): Promise<SecondFactor[]> {
  const methods: SecondFactor[] = [];
  if (user.totpEnabled) methods.push('totp');
  const passkeys = await db()('webauthnCredentials').where({ tenantId: user.tenantId, userId: user.id }).count({ n: '*' }).first();
  if (Number(passkeys?.n ?? 0) > 0) methods.push('webauthn');
  if (methods.length && Array.isArray(user.recoveryCodes) && user.recoveryCodes.length) methods.push('recovery');
  return methods;
}

/**
 * Password step of a login. The attempt is counted before the password is checked (claimAttempt:
 * 429 while locked; parallel guesses cannot all be checked). Unknown e-mails are checked against a
 * dummy hash and locked out alike, so both paths look the same. With a second factor the answer
 * is a challenge and the right password gives its attempt back; counters reset only when the
 * whole login succeeds, so re-entering the password cannot reset second-factor guesses.
 */
export async function passwordLogin(input: { email: string; password: string }, requestId?: string): Promise<Session | TwoFactorChallenge> {
  const user = await findUserByEmail(input.email);
  if (!user?.active) {
    // No active account: the same hashing work, the same counter schedule and the same answers
    // (401, then 429 when "locked") as a real account with a wrong password.
    await claimUnknownLoginAttempt(input.email);
    await verifyPassword(await dummyPasswordHash(), input.password);
    throw invalidCredentials();
  }
  const attempt = await claimAttempt(user.id);
  if (!(await verifyPassword(user.passwordHash, input.password))) throw invalidCredentials();
  const methods = await secondFactorsOf(user);
  if (methods.length) {
    await releaseAttempt(attempt);
    return { twoFactorRequired: true, challengeToken: signChallengeToken({ sub: user.id, tid: user.tenantId, methods }), methods };
  }
  return completeLogin(user.id, 'password', requestId);
}

/** Finish a login: reset the lockout counters, start a refresh-token family, audit, sign the access token. */
export async function completeLogin(userId: string, method: 'password' | SecondFactor | 'register', requestId?: string): Promise<Session> {
  return db().transaction(async (trx) => {
    const [user] = await trx('users')
      .where({ id: userId, active: true })
      .update({ failedLoginCount: 0, lockoutCount: 0, lockedUntil: null, lastLoginAt: now() })
      .returning(['id', 'email', 'name', 'role', 'tenantId']);
    if (!user) throw invalidCredentials();
    const refresh = await issueRefreshToken(trx, { tenantId: user.tenantId, userId: user.id });
    await audit(
      trx,
      { userId: user.id, tenantId: user.tenantId, role: user.role, requestId },
      {
        action: 'user.login',
        entityType: 'user',
        entityId: user.id,
        data: { method },
      },
    );
    return { token: signAccessToken({ sub: user.id, tid: user.tenantId, role: user.role }), refresh, user: publicUser(user) };
  });
}
