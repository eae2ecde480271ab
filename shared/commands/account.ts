import { randomUUID } from 'node:crypto';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Knex } from 'knex';
import { now, nowMs } from '../clock';
import { audit } from '../audit';
import type { Db } from '../db';
import { invalidInput, notFound, unauthorized } from '../errors';
import { jobs } from '../jobs/catalog';
import { enqueueAfterCommit } from '../outbox';
import { User } from '../models/User';
import { findUserByEmail } from '../queries/auth';
import { verifyPassword } from '../auth/passwords';
import { signAccessToken } from '../auth/accessToken';
import { proofNow, type ProofMethod } from '../auth/freshProof';
import { claimAttempt, releaseAttempt, type ClaimedAttempt } from '../auth/lockout';
import { issueRefreshToken, revokeUserRefreshTokens } from '../auth/refreshTokens';
import { PASSWORD_RESET_TTL_MS, passwordResetLink, passwordResetToken, passwordResetTokenHash } from '../auth/passwordReset';
import type { AccountNotice } from '../domain/accountEmails';
import { consumeSecondFactorCode } from './twoFactor';
import { takeAuthenticationChallenge, verifyPasskeyAssertion } from './webauthn';
import { publicUser, type Session } from './login';
import type { AnonymousContext, CommandContext } from './types';

/**
 * Account self-service (docs/auth.md): forgotten password, password change, re-authentication
 * for a fresh proof, the own sessions. Passwords are hashed by the caller before the transaction
 * (argon2 takes tens of milliseconds and should hold no connection), as at login.
 */

/** Queue the e-mail telling a user what happened to their account (sent by workers/jobs/email/accountEmails.ts). */
export async function queueAccountNotice(trx: Knex.Transaction, user: { tenantId: string; id: string }, notice: AccountNotice): Promise<void> {
  await enqueueAfterCommit(trx, jobs.sendAccountNotice, { tenantId: user.tenantId, userId: user.id, notice, ref: randomUUID() });
}

// ── Forgotten password ──────────────────────────────────────────────────────────────────────

/**
 * POST /api/auth/password/forgot: one reset row and one e-mail job, whether the e-mail has an
 * active account or not (the row then names no user, and the job sends nothing). The same
 * statements run on both paths, so neither the answer nor its timing tells them apart; the link
 * itself is made and sent by the worker.
 */
export async function requestPasswordReset({ trx }: AnonymousContext, email: string): Promise<void> {
  const user = await findUserByEmail(trx, email);
  const owner = user?.active ? user : null;
  // Expired requests of anyone go here, on both paths alike: the table holds minutes of requests.
  await trx('passwordResets').where('expiresAt', '<=', now()).delete();
  const id = randomUUID();
  await trx('passwordResets').insert({
    id,
    tenantId: owner?.tenantId ?? null,
    userId: owner?.id ?? null,
    tokenHash: passwordResetTokenHash(passwordResetToken(id)),
    expiresAt: new Date(nowMs() + PASSWORD_RESET_TTL_MS),
  });
  await enqueueAfterCommit(trx, jobs.sendPasswordResetEmail, { resetId: id });
}

export interface PasswordResetMail {
  to: string;
  name: string;
  link: string;
}

/**
 * The e-mail of one reset request, for its job: null when there is nothing to send (no active
 * account, the request expired or was used). A request without an account is removed here.
 */
export async function passwordResetMailOf({ trx }: AnonymousContext, resetId: string): Promise<PasswordResetMail | null> {
  const row = await trx('passwordResets').where({ id: resetId }).first();
  if (!row) return null;
  if (!row.userId) {
    await trx('passwordResets').where({ id: resetId }).delete();
    return null;
  }
  if (new Date(row.expiresAt).getTime() <= nowMs()) return null;
  const user = await User.query(trx).where({ id: row.userId, tenantId: row.tenantId, active: true }).first();
  if (!user) return null;
  return { to: user.email, name: user.name, link: passwordResetLink(passwordResetToken(resetId)) };
}

/** The one answer for an unknown, used or expired reset token: which of them it was helps nobody. */
const invalidResetToken = () => unauthorized('The password reset link is invalid, expired or already used; request a new one');

/** A reset token checked before the new password is hashed: its user, and that the password is a new one. */
export interface CheckedReset {
  tokenHash: string;
  userId: string;
  tenantId: string;
}

/**
 * Check a reset token and the new password before anything is written: 401 for a token that is
 * not live, 400 when the new password is the current one. Outside any transaction (argon2);
 * resetPassword checks the token again under its row lock.
 */
export async function checkPasswordReset(q: Db, token: string, newPassword: string): Promise<CheckedReset> {
  const tokenHash = passwordResetTokenHash(token);
  const row = await q('passwordResets').where({ tokenHash }).first();
  if (!row?.userId || new Date(row.expiresAt).getTime() <= nowMs()) throw invalidResetToken();
  const user = await User.query(q).where({ id: row.userId, tenantId: row.tenantId, active: true }).first();
  if (!user) throw invalidResetToken();
  if (await verifyPassword(user.passwordHash, newPassword)) throw samePassword();
  return { tokenHash, userId: user.id, tenantId: user.tenantId };
}

/**
 * Set the new password (already hashed) with a reset token: single use, as the user's other
 * reset rows are removed with it; every refresh-token family of the user is revoked; the lockout
 * counters reset (whoever holds the link proved the mailbox). The second factor stays: a reset
 * password alone does not log anyone in when the account has one.
 */
export async function resetPassword({ trx, requestId }: AnonymousContext, checked: CheckedReset, passwordHash: string): Promise<void> {
  const row = await trx('passwordResets').where({ tokenHash: checked.tokenHash }).forUpdate().first();
  if (!row?.userId || new Date(row.expiresAt).getTime() <= nowMs()) throw invalidResetToken();
  const user = await User.query(trx).where({ id: row.userId, tenantId: row.tenantId, active: true }).forUpdate().first();
  if (!user) throw invalidResetToken();
  await User.query(trx)
    .where({ id: user.id, tenantId: user.tenantId })
    .patch({ passwordHash, failedLoginCount: 0, lockoutCount: 0, lockedUntil: null, updatedAt: trx.fn.now() });
  await trx('passwordResets').where({ tenantId: user.tenantId, userId: user.id }).delete();
  await revokeUserRefreshTokens(trx, user.tenantId, user.id);
  await audit(
    trx,
    { userId: user.id, tenantId: user.tenantId, role: user.role, requestId },
    { action: 'user.password_reset', entityType: 'user', entityId: user.id },
  );
  await queueAccountNotice(trx, user, 'password-changed');
}

// ── Proofs by a logged-in user (password change, re-authentication) ────────────────────────

/** A counted password, code or passkey attempt of the acting user (with the passkey challenge it spent). */
export interface ClaimedProof {
  user: User;
  attempt: ClaimedAttempt;
  passkeyChallenge?: string | null;
}

/**
 * Count a password or second-factor attempt of the logged-in user before it is checked, like a
 * login attempt (429 while locked; docs/auth.md, "Login, enumeration, lockout"): a stolen access
 * token must not become an unlimited password oracle. The caller commits this first.
 */
export async function claimProofAttempt({ trx, actor }: CommandContext, opts: { passkey?: boolean } = {}): Promise<ClaimedProof> {
  const user = await User.query(trx).where({ id: actor.userId, tenantId: actor.tenantId, active: true }).first();
  if (!user) throw unauthorized('The user no longer exists or is deactivated');
  const attempt = await claimAttempt(trx, user.id);
  // Spent with the claim, so it stays spent when the assertion then fails (single use).
  const passkeyChallenge = opts.passkey ? await takeAuthenticationChallenge(trx, user) : undefined;
  return { user, attempt, passkeyChallenge };
}

const wrongPassword = () => unauthorized('The password is wrong');

const samePassword = () => invalidInput('The new password must differ from the current one');

/** 400 before anything is counted or hashed: a new password must not be the one it replaces. */
export function assertNewPassword(currentPassword: string, newPassword: string): void {
  if (currentPassword === newPassword) throw samePassword();
}

/**
 * Change one's own password (the current one proven, already checked by the caller: argon2 runs
 * outside the transaction). Every session ends, this one included, and a new one starts: the
 * answer is like a login's, with a fresh proof. Pending reset links of the user stop working.
 */
export async function changePassword(
  { trx, actor }: CommandContext,
  claimed: ClaimedProof,
  input: { currentPasswordRight: boolean; newPasswordHash: string },
): Promise<Session> {
  if (!input.currentPasswordRight) throw wrongPassword();
  const { user } = claimed;
  await releaseAttempt(trx, claimed.attempt);
  await User.query(trx).where({ id: user.id, tenantId: actor.tenantId }).patch({ passwordHash: input.newPasswordHash, updatedAt: trx.fn.now() });
  await revokeUserRefreshTokens(trx, actor.tenantId, user.id);
  // A reset link asked for before the change would undo it: it goes too.
  await trx('passwordResets').where({ tenantId: actor.tenantId, userId: user.id }).delete();
  await audit(trx, actor, { action: 'user.password_changed', entityType: 'user', entityId: user.id });
  await queueAccountNotice(trx, user, 'password-changed');
  const refresh = await issueRefreshToken(trx, { tenantId: actor.tenantId, userId: user.id });
  return { token: signAccessToken({ sub: user.id, tid: actor.tenantId, role: user.role, ...proofNow(['pwd']) }), refresh, user: publicUser(user) };
}

/**
 * A new access token carrying a fresh proof: the password (checked by the caller), a TOTP or
 * recovery code (spent here, as at login) or a passkey assertion (against the challenge
 * claimProofAttempt spent). A right proof gives its attempt back.
 */
export async function reauthenticate(
  { trx, actor }: CommandContext,
  claimed: ClaimedProof,
  proof: { passwordRight: boolean } | { code: string } | { passkey: AuthenticationResponseJSON },
): Promise<{ token: string }> {
  const { user } = claimed;
  let amr: ProofMethod[];
  if ('passkey' in proof) {
    await verifyPasskeyAssertion(trx, { user, expectedChallenge: claimed.passkeyChallenge ?? null }, proof.passkey);
    amr = ['hwk'];
  } else if ('code' in proof) {
    if (!(await consumeSecondFactorCode(trx, user, proof.code))) throw unauthorized('Invalid or expired two-factor code');
    amr = ['otp'];
  } else {
    if (!proof.passwordRight) throw wrongPassword();
    amr = ['pwd'];
  }
  await releaseAttempt(trx, claimed.attempt);
  await audit(trx, actor, { action: 'user.reauthenticated', entityType: 'user', entityId: user.id, data: { method: amr[0] } });
  return { token: signAccessToken({ sub: user.id, tid: actor.tenantId, role: user.role, ...proofNow(amr) }) };
}

// ── Sessions ─────────────────────────────────────────────────────────────────────────────────

/** Revoke one of the own sessions (a refresh-token family); 404 for anyone else's or an ended one. */
export async function revokeSession({ trx, actor }: CommandContext, familyId: string): Promise<void> {
  const n = await trx('refreshTokens').where({ tenantId: actor.tenantId, userId: actor.userId, familyId }).whereNull('revokedAt').update({ revokedAt: now() });
  if (!n) throw notFound('Session');
  await audit(trx, actor, { action: 'user.session_revoked', entityType: 'user', entityId: actor.userId, data: { sessionId: familyId } });
}
