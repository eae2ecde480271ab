import { createHash } from 'node:crypto';
import { db } from '../db';
import { nowMs } from '../clock';
import { rateLimited } from '../errors';

/**
 * Account lockout (spec: 5 failed logins lock for 5 minutes, growing on repetition; decisions.md:
 * 5, 10, 20, 40 … minutes, capped at 24 h). Failed second-factor attempts count too. Counters
 * live on the user row and change under a row lock, so parallel attempts cannot undercount.
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

/** Count one failed attempt; the fifth in a row locks the account for the next lockout duration. */
export async function recordLoginFailure(userId: string): Promise<{ locked: boolean; lockedUntil: Date | null }> {
  return countFailure({ table: 'users', where: { id: userId } });
}

/** The lockout row of an e-mail that has no active account (unknown or deactivated). */
export async function unknownLoginState(email: string): Promise<LockState> {
  const row = await db()('unknownLoginAttempts').where({ emailHash: emailHash(email) }).first('lockedUntil');
  return row ?? { lockedUntil: null };
}

/**
 * Count a failed login for an e-mail without an active account on the same schedule as a real
 * one, so the answers (401, then 429 with Retry-After) cannot tell the two apart.
 */
export async function recordUnknownLoginFailure(email: string): Promise<{ locked: boolean; lockedUntil: Date | null }> {
  const key = emailHash(email);
  await db()('unknownLoginAttempts').insert({ emailHash: key }).onConflict('emailHash').ignore();
  return countFailure({ table: 'unknownLoginAttempts', where: { emailHash: key } });
}

/** Rows of unknown e-mails untouched for longer than the longest lockout are of no further use. */
export async function purgeStaleUnknownLoginAttempts(): Promise<number> {
  return db()('unknownLoginAttempts').where('updatedAt', '<', new Date(nowMs() - MAX_LOCKOUT_MS)).delete();
}

const emailHash = (email: string) => createHash('sha256').update(email.trim().toLowerCase()).digest('hex');

async function countFailure(row: CounterRow): Promise<{ locked: boolean; lockedUntil: Date | null }> {
  return db().transaction(async (trx) => {
    const u = await trx(row.table).where(row.where).forUpdate().first('failedLoginCount', 'lockoutCount', 'lockedUntil');
    if (!u) return { locked: false, lockedUntil: null };
    // A parallel attempt may already have locked the account: do not count into the next round.
    if (u.lockedUntil && new Date(u.lockedUntil).getTime() > nowMs()) return { locked: true, lockedUntil: new Date(u.lockedUntil) };
    const failed = u.failedLoginCount + 1;
    if (failed >= MAX_FAILED_ATTEMPTS) {
      const lockoutCount = u.lockoutCount + 1;
      const lockedUntil = new Date(nowMs() + lockoutDurationMs(lockoutCount));
      await trx(row.table).where(row.where).update({ failedLoginCount: 0, lockoutCount, lockedUntil, updatedAt: new Date(nowMs()) });
      return { locked: true, lockedUntil };
    }
    await trx(row.table).where(row.where).update({ failedLoginCount: failed, updatedAt: new Date(nowMs()) });
    return { locked: false, lockedUntil: null };
  });
}
