import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { randomBytes } from 'node:crypto';
import { db } from '../db';
import { config } from '../config';
import { nowMs } from '../clock';
import { audit } from '../audit';
import type { Actor } from '../actor';
import { invalidInput, notFound, unauthorized } from '../errors';
import { logger } from '../logger';
import { verifyChallengeToken } from '../auth/challengeToken';
import { assertNotLocked, claimAttempt } from '../auth/lockout';
import { completeLogin, type Session } from './login';

/**
 * WebAuthn / passkeys (FIDO2) with @simplewebauthn/server. Platform authenticators cover the
 * spec's "biometric (fingerprint or face on mobile)". Passkeys are a second factor after the
 * password: login/options takes the challengeToken of the password step. The pending challenge
 * lives on the user row (webauthn_challenge) and is spent by the first verify that reads it.
 */
const CHALLENGE_TTL_MS = 5 * 60_000;
const TIMEOUT_MS = 60_000;

interface StoredChallenge {
  type: 'registration' | 'authentication';
  challenge: string;
  expiresAt: number;
}

const rp = () => config().webauthn;

export interface PasskeyView {
  id: string;
  credentialId: string;
  deviceType: string | null;
  backedUp: boolean | null;
  createdAt: string;
}

const passkeyView = (r: { id: string; credentialId: string; deviceType: string | null; backedUp: boolean | null; createdAt: Date | string }): PasskeyView => ({
  id: r.id,
  credentialId: r.credentialId,
  deviceType: r.deviceType,
  backedUp: r.backedUp,
  createdAt: new Date(r.createdAt).toISOString(),
});

/** Spend the pending challenge of the wanted type (single use, 5 minutes). */
async function takeChallenge(userId: string, tenantId: string, type: StoredChallenge['type']): Promise<string | null> {
  const stored = await db().transaction(async (trx) => {
    const row = await trx('users').where({ id: userId, tenantId }).forUpdate().first('webauthnChallenge');
    if (!row?.webauthnChallenge) return null;
    await trx('users').where({ id: userId, tenantId }).update({ webauthnChallenge: null });
    return row.webauthnChallenge as StoredChallenge;
  });
  if (!stored || stored.type !== type || stored.expiresAt < nowMs()) return null;
  return stored.challenge;
}

async function storeChallenge(userId: string, tenantId: string, type: StoredChallenge['type'], challenge: string) {
  const value: StoredChallenge = { type, challenge, expiresAt: nowMs() + CHALLENGE_TTL_MS };
  await db()('users')
    .where({ id: userId, tenantId })
    .update({ webauthnChallenge: JSON.stringify(value) });
}

export async function registrationOptions(actor: Actor): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const user = await db()('users').where({ id: actor.userId, tenantId: actor.tenantId, active: true }).first();
  if (!user) throw notFound('User');
  let webauthnUserId: string = user.webauthnUserId;
  if (!webauthnUserId) {
    // An opaque handle, never the e-mail or the database id (WebAuthn §14.6.1 privacy).
    webauthnUserId = isoBase64URL.fromBuffer(randomBytes(32));
    await db()('users').where({ id: user.id, tenantId: actor.tenantId }).update({ webauthnUserId });
  }
  const existing = await db()('webauthnCredentials').where({ tenantId: actor.tenantId, userId: user.id }).select('credentialId', 'transports');
  const options = await generateRegistrationOptions({
    rpName: rp().rpName,
    rpID: rp().rpId,
    userName: user.email,
    userDisplayName: user.name,
    userID: isoBase64URL.toBuffer(webauthnUserId),
    attestationType: 'none',
    timeout: TIMEOUT_MS,
    excludeCredentials: existing.map((c: { credentialId: string; transports: string[] }) => ({ id: c.credentialId, transports: c.transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
  await storeChallenge(user.id, actor.tenantId, 'registration', options.challenge);
  return options;
}

export async function verifyRegistration(actor: Actor, response: RegistrationResponseJSON): Promise<PasskeyView> {
  const challenge = await takeChallenge(actor.userId!, actor.tenantId, 'registration');
  if (!challenge) throw invalidInput('No pending passkey registration; request new options');
  let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp().origin,
      expectedRPID: rp().rpId,
      requireUserVerification: false,
    });
  } catch (err) {
    logger.info({ err: String((err as Error).message), userId: actor.userId }, 'passkey registration rejected');
    throw invalidInput('The passkey registration could not be verified');
  }
  if (!verification.verified) throw invalidInput('The passkey registration could not be verified');
  const info = verification.registrationInfo;
  return db().transaction(async (trx) => {
    const [row] = await trx('webauthnCredentials')
      .insert({
        tenantId: actor.tenantId,
        userId: actor.userId,
        credentialId: info.credential.id,
        publicKey: Buffer.from(info.credential.publicKey),
        counter: info.credential.counter,
        // Known transport names only: whatever else a client sends would be handed back in
        // allowCredentials, where a browser refuses it, and break the user's own login.
        transports: JSON.stringify(knownTransports(info.credential.transports ?? response.response.transports)),
        deviceType: info.credentialDeviceType,
        backedUp: info.credentialBackedUp,
      })
      .returning('*');
    await audit(trx, actor, { action: 'user.passkey_added', entityType: 'user', entityId: actor.userId, data: { credentialId: row.credentialId } });
    return passkeyView(row);
  });
}

export async function listPasskeys(actor: Actor): Promise<PasskeyView[]> {
  const rows = await db()('webauthnCredentials').where({ tenantId: actor.tenantId, userId: actor.userId }).orderBy('createdAt');
  return rows.map(passkeyView);
}

export async function deletePasskey(actor: Actor, id: string): Promise<void> {
  await db().transaction(async (trx) => {
    const n = await trx('webauthnCredentials').where({ tenantId: actor.tenantId, userId: actor.userId, id }).delete();
    if (!n) throw notFound('Passkey');
    // Recovery codes are a fallback of a second factor: without any left they go (as disableTotp
    // does), or a later enrolment would bring the discarded codes back to life.
    const left = await trx('webauthnCredentials').where({ tenantId: actor.tenantId, userId: actor.userId }).count({ n: '*' }).first();
    if (Number(left?.n ?? 0) === 0) {
      await trx('users')
        .where({ tenantId: actor.tenantId, id: actor.userId, totpEnabled: false })
        .update({ recoveryCodes: JSON.stringify([]), updatedAt: trx.fn.now() });
    }
    await audit(trx, actor, { action: 'user.passkey_removed', entityType: 'user', entityId: actor.userId, data: { id } });
  });
}

/** Options for the second step of a login: the user's own credentials only. */
export async function authenticationOptions(challengeToken: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const c = verifyChallengeToken(challengeToken);
  const user = await db()('users').where({ id: c.userId, tenantId: c.tenantId, active: true }).first('id', 'lockedUntil');
  if (!user) throw unauthorized('The two-factor challenge is invalid or has expired; log in again');
  assertNotLocked(user);
  const creds = await db()('webauthnCredentials').where({ tenantId: c.tenantId, userId: c.userId }).select('credentialId', 'transports');
  if (!creds.length) throw invalidInput('No passkey is registered for this account');
  const options = await generateAuthenticationOptions({
    rpID: rp().rpId,
    timeout: TIMEOUT_MS,
    userVerification: 'preferred',
    allowCredentials: creds.map((x: { credentialId: string; transports: string[] }) => ({ id: x.credentialId, transports: x.transports })),
  });
  await storeChallenge(c.userId, c.tenantId, 'authentication', options.challenge);
  return options;
}

/**
 * Second login step with a passkey: the assertion must answer the pending challenge, come from
 * one of this user's credentials, and carry a signature counter above the stored one (a cloned
 * authenticator shows up as a counter that does not grow). Failures count toward the lockout.
 */
export async function verifyAuthentication(challengeToken: string, response: AuthenticationResponseJSON, requestId?: string): Promise<Session> {
  const c = verifyChallengeToken(challengeToken);
  const user = await db()('users').where({ id: c.userId, tenantId: c.tenantId, active: true }).first('id', 'lockedUntil');
  if (!user) throw unauthorized('The two-factor challenge is invalid or has expired; log in again');
  // Counted before it is checked (429 while locked); a verified passkey completes the login, which resets the counters.
  await claimAttempt(user.id);
  const fail = (reason: string) => {
    logger.info({ userId: user.id, reason }, 'passkey login rejected');
    return unauthorized('The passkey could not be verified');
  };
  const expectedChallenge = await takeChallenge(user.id, c.tenantId, 'authentication');
  if (!expectedChallenge) throw fail('no pending challenge');
  const cred = await db()('webauthnCredentials').where({ tenantId: c.tenantId, userId: user.id, credentialId: response.id }).first();
  if (!cred) throw fail('unknown credential');
  let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: rp().origin,
      expectedRPID: rp().rpId,
      credential: { id: cred.credentialId, publicKey: new Uint8Array(cred.publicKey), counter: Number(cred.counter), transports: cred.transports },
      requireUserVerification: false,
    });
  } catch (err) {
    throw fail(String((err as Error).message));
  }
  if (!verification.verified) throw fail('signature');
  const newCounter = verification.authenticationInfo.newCounter;
  // Atomic counter step: a parallel replay of the same assertion cannot pass twice.
  const n = await db()('webauthnCredentials')
    .where({ id: cred.id, tenantId: c.tenantId })
    .andWhere((q) => (newCounter > 0 ? q.where('counter', '<', newCounter) : q.where('counter', 0)))
    .update({ counter: newCounter, backedUp: verification.authenticationInfo.credentialBackedUp, updatedAt: db().fn.now() });
  if (n !== 1) throw fail('counter');
  return completeLogin(user.id, 'webauthn', requestId);
}

const TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);
const knownTransports = (t: unknown): string[] => (Array.isArray(t) ? t.filter((x): x is string => typeof x === 'string' && TRANSPORTS.has(x)) : []);
