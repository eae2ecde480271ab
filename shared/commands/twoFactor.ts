import QRCode from 'qrcode';
import type { Knex } from 'knex';
import { config } from '../config';
import { audit } from '../audit';
import type { Actor } from '../actor';
import { invalidInput, notFound, unauthorized } from '../errors';
import { User } from '../models/User';
import { challengeUser, countPasskeys } from '../queries/auth';
import { decryptSecret, encryptSecret } from '../crypto/secretBox';
import { newTotpSecret, totpUri, verifyTotp } from '../auth/totp';
import { hashRecoveryCode, looksLikeRecoveryCode, newRecoveryCodes } from '../auth/recoveryCodes';
import { claimAttempt, releaseAttempt, type ClaimedAttempt } from '../auth/lockout';
import { assertFreshProof } from '../auth/freshProof';
import { completeLogin, type Session } from './login';
import type { AnonymousContext, CommandContext } from './types';

/**
 * TOTP two-factor: setup stores an encrypted secret that is not yet active; enable proves the
 * app has it (one valid code) and returns the recovery codes once; disable needs a valid code.
 * The login's second step (verify) accepts a TOTP code or a one-time recovery code.
 */
const wrongCode = () => unauthorized('Invalid or expired two-factor code');

async function lockedUser(trx: Knex.Transaction, actor: Actor): Promise<User> {
  const user = await User.query(trx).where({ id: actor.userId, tenantId: actor.tenantId, active: true }).forUpdate().first();
  if (!user) throw notFound('User');
  return user;
}

/** Enrolment needs a fresh proof (shared/auth/freshProof.ts): a stolen token must not bind the thief's app. */
export async function setupTotp({ trx, actor }: CommandContext): Promise<{ otpauthUri: string; qrCodeDataUrl: string }> {
  assertFreshProof(actor);
  const secret = newTotpSecret();
  const user = await lockedUser(trx, actor);
  if (user.totpEnabled) throw invalidInput('TOTP is already enabled; disable it before setting it up again');
  await User.query(trx)
    .where({ id: user.id, tenantId: actor.tenantId })
    .patch({ totpSecretEnc: encryptSecret(secret), totpLastStep: null, updatedAt: trx.fn.now() });
  const otpauthUri = totpUri(secret, user.email, config().webauthn.rpName);
  return { otpauthUri, qrCodeDataUrl: await QRCode.toDataURL(otpauthUri, { errorCorrectionLevel: 'M' }) };
}

export async function enableTotp({ trx, actor }: CommandContext, code: string): Promise<{ recoveryCodes: string[] }> {
  const user = await lockedUser(trx, actor);
  if (user.totpEnabled) throw invalidInput('TOTP is already enabled');
  if (!user.totpSecretEnc) throw invalidInput('Call POST /api/auth/2fa/totp/setup first');
  const step = await verifyTotp(decryptSecret(user.totpSecretEnc), code, null);
  if (step === null) throw wrongCode();
  const { codes, hashes } = newRecoveryCodes();
  await User.query(trx)
    .where({ id: user.id, tenantId: actor.tenantId })
    .patch({ totpEnabled: true, totpLastStep: step, recoveryCodes: hashes, updatedAt: trx.fn.now() });
  await audit(trx, actor, { action: 'user.totp_enabled', entityType: 'user', entityId: user.id });
  return { recoveryCodes: codes };
}

/**
 * A code guessed at disable is a second-factor guess like one at login: counted before it is
 * checked (429 while locked; 40 parallel wrong codes were all checked). The caller commits this
 * claim on its own before disableTotp, which gives it back when the code was right.
 */
export async function claimTotpDisableAttempt({ trx, actor }: CommandContext): Promise<ClaimedAttempt> {
  return claimAttempt(trx, actor.userId!);
}

export async function disableTotp({ trx, actor }: CommandContext, code: string, attempt: ClaimedAttempt): Promise<void> {
  const user = await lockedUser(trx, actor);
  if (!user.totpEnabled) throw invalidInput('TOTP is not enabled');
  const step = await verifyTotp(decryptSecret(user.totpSecretEnc!), code, user.totpLastStep);
  if (step === null) throw wrongCode();
  const passkeys = await countPasskeys(trx, actor.tenantId, user.id);
  await User.query(trx)
    .where({ id: user.id, tenantId: actor.tenantId })
    .patch({
      totpEnabled: false,
      totpSecretEnc: null,
      totpLastStep: null,
      // Recovery codes stay a fallback for passkey users; without any second factor they go.
      ...(passkeys > 0 ? {} : { recoveryCodes: [] }),
      updatedAt: trx.fn.now(),
    });
  await audit(trx, actor, { action: 'user.totp_disabled', entityType: 'user', entityId: user.id });
  await releaseAttempt(trx, attempt);
}

/**
 * First part of the second login step: the challenge's user, with this attempt counted (429
 * while locked). The caller commits it before the code is checked, so a wrong code stays counted.
 */
export async function claimCodeAttempt(ctx: AnonymousContext, challengeToken: string): Promise<User> {
  const user = await challengeUser(ctx.trx, challengeToken);
  if (!user) throw wrongCode();
  await claimAttempt(ctx.trx, user.id);
  return user;
}

/**
 * Second login step with a TOTP code or a recovery code (after claimCodeAttempt), spent by
 * consumeSecondFactorCode. A right code completes the login, which resets the counters.
 */
export async function verifySecondFactor(ctx: AnonymousContext, user: User, code: string): Promise<Session> {
  const method = await consumeSecondFactorCode(ctx.trx, user, code);
  if (!method) throw wrongCode();
  return completeLogin(ctx, user, method);
}

/**
 * Spend a TOTP code or a recovery code of the user (null when it is neither). Both are consumed
 * atomically (the TOTP step must be newer than the last one used; a recovery code is removed from
 * the list), so two parallel requests with the same code cannot both succeed.
 */
export async function consumeSecondFactorCode(trx: Knex.Transaction, user: User, code: string): Promise<'totp' | 'recovery' | null> {
  if (/^\d{6}$/.test(code.trim())) {
    if (!user.totpEnabled || !user.totpSecretEnc) return null;
    const step = await verifyTotp(decryptSecret(user.totpSecretEnc), code.trim(), user.totpLastStep);
    if (step === null) return null;
    const n = await User.query(trx)
      .where({ id: user.id, tenantId: user.tenantId })
      .andWhere((q) => q.whereNull('totpLastStep').orWhere('totpLastStep', '<', step))
      .patch({ totpLastStep: step });
    return n === 1 ? 'totp' : null;
  }
  if (!looksLikeRecoveryCode(code)) return null;
  const hash = hashRecoveryCode(code);
  const n = await User.query(trx)
    .where({ id: user.id, tenantId: user.tenantId })
    .whereRaw('jsonb_exists(recovery_codes, ?)', [hash])
    .patch({ recoveryCodes: trx.raw('recovery_codes - ?::text', [hash]) });
  return n === 1 ? 'recovery' : null;
}

/**
 * New recovery codes for a user with a second factor; the old ones stop working in the same
 * statement. Needs a second factor proved within the last 5 minutes: with a password alone, a
 * thief who knows it could mint codes that outlive the victim's phone.
 */
export async function regenerateRecoveryCodes({ trx, actor }: CommandContext): Promise<{ recoveryCodes: string[] }> {
  const user = await lockedUser(trx, actor);
  if (!user.totpEnabled && (await countPasskeys(trx, actor.tenantId, user.id)) === 0) {
    throw invalidInput('Recovery codes belong to a second factor: enable TOTP or add a passkey first');
  }
  assertFreshProof(actor, 'second-factor');
  const { codes, hashes } = newRecoveryCodes();
  await User.query(trx).where({ id: user.id, tenantId: actor.tenantId }).patch({ recoveryCodes: hashes, updatedAt: trx.fn.now() });
  await audit(trx, actor, { action: 'user.recovery_codes_regenerated', entityType: 'user', entityId: user.id });
  return { recoveryCodes: codes };
}
