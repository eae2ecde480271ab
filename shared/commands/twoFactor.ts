import QRCode from 'qrcode';
import { db } from '../db';
import { config } from '../config';
import { audit } from '../audit';
import type { Actor } from '../actor';
import { invalidInput, notFound, unauthorized } from '../errors';
import { decryptSecret, encryptSecret } from '../crypto/secretBox';
import { newTotpSecret, totpUri, verifyTotp } from '../auth/totp';
import { hashRecoveryCode, looksLikeRecoveryCode, newRecoveryCodes } from '../auth/recoveryCodes';
import { verifyChallengeToken } from '../auth/challengeToken';
import { claimAttempt, releaseAttempt } from '../auth/lockout';
import { completeLogin, type Session } from './login';

/**
 * TOTP two-factor: setup stores an encrypted secret that is not yet active; enable proves the
 * app has it (one valid code) and returns the recovery codes once; disable needs a valid code.
 * The login's second step (verify) accepts a TOTP code or a one-time recovery code.
 */
const wrongCode = () => unauthorized('Invalid or expired two-factor code');

async function lockedUser(trx: import('knex').Knex.Transaction, actor: Actor) {
  const user = await trx('users').where({ id: actor.userId, tenantId: actor.tenantId, active: true }).forUpdate().first();
  if (!user) throw notFound('User');
  return user;
}

export async function setupTotp(actor: Actor): Promise<{ otpauthUri: string; qrCodeDataUrl: string }> {
  const secret = newTotpSecret();
  const email = await db().transaction(async (trx) => {
    const user = await lockedUser(trx, actor);
    if (user.totpEnabled) throw invalidInput('TOTP is already enabled; disable it before setting it up again');
    await trx('users')
      .where({ id: user.id, tenantId: actor.tenantId })
      .update({ totpSecretEnc: encryptSecret(secret), totpLastStep: null, updatedAt: trx.fn.now() });
    return user.email as string;
  });
  const otpauthUri = totpUri(secret, email, config().webauthn.rpName);
  return { otpauthUri, qrCodeDataUrl: await QRCode.toDataURL(otpauthUri, { errorCorrectionLevel: 'M' }) };
}

export async function enableTotp(actor: Actor, code: string): Promise<{ recoveryCodes: string[] }> {
  return db().transaction(async (trx) => {
    const user = await lockedUser(trx, actor);
    if (user.totpEnabled) throw invalidInput('TOTP is already enabled');
    if (!user.totpSecretEnc) throw invalidInput('Call POST /api/auth/2fa/totp/setup first');
    const step = await verifyTotp(decryptSecret(user.totpSecretEnc), code, null);
    if (step === null) throw wrongCode();
    const { codes, hashes } = newRecoveryCodes();
    await trx('users')
      .where({ id: user.id, tenantId: actor.tenantId })
      .update({ totpEnabled: true, totpLastStep: step, recoveryCodes: JSON.stringify(hashes), updatedAt: trx.fn.now() });
    await audit(trx, actor, { action: 'user.totp_enabled', entityType: 'user', entityId: user.id });
    return { recoveryCodes: codes };
  });
}

export async function disableTotp(actor: Actor, code: string): Promise<void> {
  // A code guessed here is a second-factor guess like one at login: counted before it is checked
  // (429 while locked; 40 parallel wrong codes were all checked), given back when it was right.
  // Claimed before the transaction, which locks the same user row.
  const attempt = await claimAttempt(actor.userId!);
  await db().transaction(async (trx) => {
    const user = await lockedUser(trx, actor);
    if (!user.totpEnabled) throw invalidInput('TOTP is not enabled');
    const step = await verifyTotp(decryptSecret(user.totpSecretEnc), code, user.totpLastStep);
    if (step === null) throw wrongCode();
    const passkeys = await trx('webauthnCredentials').where({ tenantId: actor.tenantId, userId: user.id }).count({ n: '*' }).first();
    await trx('users')
      .where({ id: user.id, tenantId: actor.tenantId })
      .update({
        totpEnabled: false,
        totpSecretEnc: null,
        totpLastStep: null,
        // Recovery codes stay a fallback for passkey users; without any second factor they go.
        ...(Number(passkeys?.n ?? 0) > 0 ? {} : { recoveryCodes: JSON.stringify([]) }),
        updatedAt: trx.fn.now(),
      });
    await audit(trx, actor, { action: 'user.totp_disabled', entityType: 'user', entityId: user.id });
  });
  await releaseAttempt(attempt);
}

/**
 * Second login step with a TOTP code or a recovery code. Both are consumed atomically (the TOTP
 * step must be newer than the last one used; a recovery code is removed from the list), so two
 * parallel requests with the same code cannot both succeed. Failures count toward the lockout.
 */
export async function verifySecondFactor(challengeToken: string, code: string, requestId?: string): Promise<Session> {
  const challenge = verifyChallengeToken(challengeToken);
  const user = await db()('users').where({ id: challenge.userId, tenantId: challenge.tenantId, active: true }).first();
  if (!user) throw wrongCode();
  // Counted before it is checked (429 while locked); a right code completes the login, which resets the counters.
  await claimAttempt(user.id);
  let method: 'totp' | 'recovery' | null = null;
  if (/^\d{6}$/.test(code.trim())) {
    if (user.totpEnabled && user.totpSecretEnc) {
      const step = await verifyTotp(decryptSecret(user.totpSecretEnc), code.trim(), user.totpLastStep);
      if (step !== null) {
        const n = await db()('users')
          .where({ id: user.id, tenantId: user.tenantId })
          .andWhere((q) => q.whereNull('totpLastStep').orWhere('totpLastStep', '<', step))
          .update({ totpLastStep: step });
        if (n === 1) method = 'totp';
      }
    }
  } else if (looksLikeRecoveryCode(code)) {
    const hash = hashRecoveryCode(code);
    const n = await db()('users')
      .where({ id: user.id, tenantId: user.tenantId })
      .whereRaw('jsonb_exists(recovery_codes, ?)', [hash])
      .update({ recoveryCodes: db().raw('recovery_codes - ?::text', [hash]) });
    if (n === 1) method = 'recovery';
  }
  if (!method) throw wrongCode();
  return completeLogin(user.id, method, requestId);
}
