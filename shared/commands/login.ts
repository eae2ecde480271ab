import { now } from '../clock';
import { audit } from '../audit';
import { unauthorized } from '../errors';
import type { Role } from '../actor';
import { User } from '../models/User';
import { findUserByEmail, secondFactorsOf } from '../queries/auth';
import { signAccessToken } from '../auth/accessToken';
import { dummyPasswordHash, verifyPassword } from '../auth/passwords';
import { claimAttempt, claimUnknownLoginAttempt, releaseAttempt, type ClaimedAttempt } from '../auth/lockout';
import { issueRefreshToken, revokeRefreshFamily, rotateRefreshToken, type IssuedRefreshToken, type RotatedSession } from '../auth/refreshTokens';
import { signChallengeToken, type SecondFactor } from '../auth/challengeToken';
import { proofNow, type ProofMethod } from '../auth/freshProof';
import type { AnonymousContext } from './types';

/**
 * Login commands. Nobody is authenticated yet, so they take an AnonymousContext ({ trx,
 * requestId }). A login is several steps in separate transactions that the route opens: every
 * attempt is counted and committed before the password or code is checked (docs/auth.md,
 * "Login, enumeration, lockout"), so a failure stays counted when the answer is 401.
 */

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

/** A counted password attempt: the e-mail's active account (null for none) and the attempt claimed for it. */
export interface PasswordAttempt {
  user: User | null;
  attempt: ClaimedAttempt;
}

/**
 * First step of a password login: count the attempt (claimAttempt: 429 while locked; parallel
 * guesses cannot all be checked). E-mails without an active account are counted on the same
 * schedule in their own table, so both paths give the same answers (401, then 429).
 */
export async function claimPasswordAttempt({ trx }: AnonymousContext, email: string): Promise<PasswordAttempt> {
  const user = await findUserByEmail(trx, email);
  if (!user?.active) return { user: null, attempt: await claimUnknownLoginAttempt(trx, email) };
  return { user, attempt: await claimAttempt(trx, user.id) };
}

/**
 * Second step, outside any transaction (argon2 takes tens of milliseconds and should hold no
 * connection): 401 unless the password is right. Without an account the password is checked
 * against a dummy hash, so the timing does not tell the two apart.
 */
export async function checkPassword(claimed: PasswordAttempt, password: string): Promise<User> {
  if (!claimed.user) {
    await verifyPassword(await dummyPasswordHash(), password);
    throw invalidCredentials();
  }
  if (!(await verifyPassword(claimed.user.passwordHash, password))) throw invalidCredentials();
  return claimed.user;
}

/**
 * Last step, after a right password: with a second factor the answer is a challenge and the
 * attempt is given back; counters reset only when the whole login succeeds, so re-entering the
 * password cannot reset second-factor guesses.
 */
export async function finishPasswordLogin(ctx: AnonymousContext, user: User, attempt: ClaimedAttempt): Promise<Session | TwoFactorChallenge> {
  const methods = await secondFactorsOf(ctx.trx, user);
  if (methods.length) {
    await releaseAttempt(ctx.trx, attempt);
    return { twoFactorRequired: true, challengeToken: signChallengeToken({ sub: user.id, tid: user.tenantId, methods }), methods };
  }
  return completeLogin(ctx, user, 'password');
}

/** Finish a login: reset the lockout counters, start a refresh-token family, audit, sign the access token. */
export async function completeLogin(
  { trx, requestId }: AnonymousContext,
  who: Pick<User, 'id' | 'tenantId'>,
  method: 'password' | SecondFactor | 'register',
): Promise<Session> {
  const [user] = await User.query(trx)
    .where({ id: who.id, tenantId: who.tenantId, active: true })
    .patch({ failedLoginCount: 0, lockoutCount: 0, lockedUntil: null, lastLoginAt: now() })
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
  return {
    token: signAccessToken({ sub: user.id, tid: user.tenantId, role: user.role, ...proofNow(PROOFS[method]) }),
    refresh,
    user: publicUser(user),
  };
}

/** What a login proved (the access token's amr claim, shared/auth/freshProof.ts). */
const PROOFS: Record<'password' | SecondFactor | 'register', ProofMethod[]> = {
  password: ['pwd'],
  register: ['pwd'],
  totp: ['pwd', 'otp'],
  recovery: ['pwd', 'otp'],
  webauthn: ['pwd', 'hwk'],
};

/**
 * A new access token for a refresh token, which is spent and succeeded by a new one (its family
 * is revoked when it was spent before). Null for anything but a live, unspent token: the caller
 * commits, then answers 401, so a revocation stays.
 */
export async function refreshSession({ trx }: AnonymousContext, refreshToken: string | undefined): Promise<{ token: string; rotated: RotatedSession } | null> {
  const rotated = await rotateRefreshToken(trx, refreshToken);
  if (!rotated) return null;
  return { token: signAccessToken({ sub: rotated.user.id, tid: rotated.user.tenantId, role: rotated.user.role }), rotated };
}

/** Logout: revoke the family of the presented refresh token, whatever its state. */
export async function logout({ trx }: AnonymousContext, refreshToken: string | undefined): Promise<void> {
  await revokeRefreshFamily(trx, refreshToken);
}
