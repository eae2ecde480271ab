import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { db } from '../db';
import { nowMs } from '../clock';
import { rateLimited } from '../errors';

/**
 * Account lockout (spec: 5 failed logins lock for 5 minutes, growing on repetition;
 * docs/auth.md, "Login, enumeration, lockout": 5, 10, 20, 40 … minutes, capped at 24 h). Failed second-factor attempts count too. Counters
 * live on the user row; every attempt is counted under the row lock before it is checked
 * (claimAttempt), so parallel attempts can neither undercount nor get more guesses checked.
 * The caller commits a claim in its own transaction before the check: a failure stays counted
 * when the answer is 401.
 */
export const MAX_FAILED_ATTEMPTS = 5;
export const BASE_LOCKOUT_MS = 5 * 60_000;
export const MAX_LOCKOUT_MS = 24 * 3600_000;

/** Duration of the n-th lockout (1-based): 5 min · 2^(n−1), at most 24 h. */
export function lockoutDurationMs(n: number): number {
  const exp = Math.min(Math.max(n, 1) - 1, 20);
  return Math.min(BASE_LOCKOUT_MS * 2 ** exp, MAX_LOCKOUT_MS);
}

export interface LockState {
  lockedUntil: Date | string | null;
}

/** 429 RATE_LIMITED with Retry-After (seconds left) while the account is locked. */
export function assertNotLocked(user: LockState): void {
  if (!user.lockedUntil) return;
  const left = new Date(user.lockedUntil).getTime() - nowMs();
  if (left > 0) throw rateLimited(left / 1000, 'Account temporarily locked after repeated failed logins; try again later');
}

/** Where a lockout counter lives: on the user row, or for e-mails without an active account in their own table. */
type CounterRow = { table: 'users'; where: { id: string } } | { table: 'unknownLoginAttempts'; where: { emailHash: string } };

/** An attempt counted by claimAttempt; lockedUntil is set when this very attempt locked the account. */
export interface ClaimedAttempt {
  row: CounterRow;
  lockedUntil: Date | null;
}

/**
 * One login attempt (password, TOTP or recovery code, passkey), counted as failed BEFORE it is
 * checked, under the row lock; a locked account answers 429 here. So at most MAX_FAILED_ATTEMPTS
 * guesses are checked per lockout however many arrive in parallel (docs/auth.md, "Login,
 * enumeration, lockout"). A right attempt completes the login (completeLogin resets the counters)
 * or, when a second factor follows, gives its count back (releaseAttempt).
 */
export async function claimAttempt(trx: Knex.Transaction, userId: string): Promise<ClaimedAttempt> {
  return claim(trx, { table: 'users', where: { id: userId } });
}

/** The same for an e-mail that has no active account (unknown or deactivated), on the same schedule, so the answers cannot tell the two apart. */
export async function claimUnknownLoginAttempt(trx: Knex.Transaction, email: string): Promise<ClaimedAttempt> {
  const key = emailHash(email);
  await trx('unknownLoginAttempts').insert({ emailHash: key }).onConflict('emailHash').ignore();
  return claim(trx, { table: 'unknownLoginAttempts', where: { emailHash: key } });
}

/**
 * A claimed attempt that was right, where the login goes on (the password before a second
 * factor): its count is taken back, and a lockout it started is undone — the failures before it
 * stay counted. Second-factor failures keep counting, so re-entering the right password cannot
 * reset them. A lockout that parallel attempts started meanwhile stays.
 */
export async function releaseAttempt(trx: Knex.Transaction, attempt: ClaimedAttempt): Promise<void> {
  const u = await lockCounters(trx, attempt.row);
  if (!u) return;
  const lockedUntil = u.lockedUntil ? new Date(u.lockedUntil).getTime() : null;
  if (attempt.lockedUntil && lockedUntil === attempt.lockedUntil.getTime()) {
    await trx(attempt.row.table)
      .where(attempt.row.where)
      .update({ failedLoginCount: MAX_FAILED_ATTEMPTS - 1, lockoutCount: Math.max(u.lockoutCount - 1, 0), lockedUntil: null, updatedAt: new Date(nowMs()) });
  } else if (!(lockedUntil && lockedUntil > nowMs()) && u.failedLoginCount > 0) {
    await trx(attempt.row.table)
      .where(attempt.row.where)
      .update({ failedLoginCount: u.failedLoginCount - 1, updatedAt: new Date(nowMs()) });
  }
}

/** The counters of one row, locked until the caller's transaction ends. */
interface Counters {
  failedLoginCount: number;
  lockoutCount: number;
  lockedUntil: Date | null;
}

const lockCounters = (trx: Knex.Transaction, row: CounterRow): Promise<Counters | undefined> =>
  trx(row.table).where(row.where).forUpdate().first('failedLoginCount', 'lockoutCount', 'lockedUntil');

/** Rows of unknown e-mails untouched for longer than the longest lockout are of no further use. */
export async function purgeStaleUnknownLoginAttempts(): Promise<number> {
  return db()('unknownLoginAttempts')
    .where('updatedAt', '<', new Date(nowMs() - MAX_LOCKOUT_MS))
    .delete();
}

/** SHA-256 of the normalised e-mail: what per-e-mail counters (this table, the login rate limit) are keyed by, so no readable address is stored. */
export const emailHash = (email: string) => createHash('sha256').update(email.trim().toLowerCase()).digest('hex');

/** Count one attempt; the fifth in a row locks the account for the next lockout duration. 429 while locked. */
async function claim(trx: Knex.Transaction, row: CounterRow): Promise<ClaimedAttempt> {
  const u = await lockCounters(trx, row);
  if (!u) return { row, lockedUntil: null };
  assertNotLocked(u);
  const failed = u.failedLoginCount + 1;
  if (failed >= MAX_FAILED_ATTEMPTS) {
    const lockoutCount = u.lockoutCount + 1;
    const lockedUntil = new Date(nowMs() + lockoutDurationMs(lockoutCount));
    await trx(row.table)
      .where(row.where)
      .update({ failedLoginCount: 0, lockoutCount, lockedUntil, updatedAt: new Date(nowMs()) });
    return { row, lockedUntil };
  }
  await trx(row.table)
    .where(row.where)
    .update({ failedLoginCount: failed, updatedAt: new Date(nowMs()) });
  return { row, lockedUntil: null };
}
