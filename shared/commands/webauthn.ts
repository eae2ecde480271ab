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
import type { Knex } from 'knex';
import { config } from '../config';
import { nowMs } from '../clock';
import { audit } from '../audit';
import { invalidInput, notFound, unauthorized } from '../errors';
import { logger } from '../logger';
import { User, type StoredWebauthnChallenge } from '../models/User';
import { challengeUser, countPasskeys, passkeyDescriptors, passkeyView, type PasskeyRow, type PasskeyView } from '../queries/auth';
import { assertNotLocked, claimAttempt } from '../auth/lockout';
import { assertFreshProof } from '../auth/freshProof';
import { completeLogin, type Session } from './login';
import type { AnonymousContext, CommandContext } from './types';

/**
 * WebAuthn / passkeys (FIDO2) with @simplewebauthn/server. Platform authenticators cover the
 * spec's "biometric (fingerprint or face on mobile)". Passkeys are a second factor after the
 * password: login/options takes the challengeToken of the password step. The pending challenge
 * lives on the user row (webauthn_challenge) and is spent by the first verify that reads it;
 * the caller commits the spending on its own, so it stays spent when the verification fails.
 */
const CHALLENGE_TTL_MS = 5 * 60_000;
const TIMEOUT_MS = 60_000;

const rp = () => config().webauthn;

/**
 * The origins whose ceremonies we accept: the RP's own and the related origins it lists at
 * /.well-known/webauthn (WebAuthn Level 3, related origin requests). A browser on one of those
 * addresses may use our RP ID, and writes its own origin into clientDataJSON; any other origin
 * is refused, also when the RP ID hash matches.
 */
export const acceptedOrigins = (): string[] => [rp().origin, ...rp().relatedOrigins.filter((o) => o !== rp().origin)];

const invalidChallenge = () => unauthorized('The two-factor challenge is invalid or has expired; log in again');

/** Spend the pending challenge of the wanted type (single use, 5 minutes). */
async function takeChallenge(trx: Knex.Transaction, userId: string, tenantId: string, type: StoredWebauthnChallenge['type']): Promise<string | null> {
  const row = await User.query(trx).where({ id: userId, tenantId }).forUpdate().select('webauthnChallenge').first();
  const stored = row?.webauthnChallenge;
  if (!stored) return null;
  await User.query(trx).where({ id: userId, tenantId }).patch({ webauthnChallenge: null });
  if (stored.type !== type || stored.expiresAt < nowMs()) return null;
  return stored.challenge;
}

async function storeChallenge(trx: Knex.Transaction, userId: string, tenantId: string, type: StoredWebauthnChallenge['type'], challenge: string) {
  await User.query(trx)
    .where({ id: userId, tenantId })
    .patch({ webauthnChallenge: { type, challenge, expiresAt: nowMs() + CHALLENGE_TTL_MS } });
}

export async function registrationOptions({ trx, actor }: CommandContext): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const user = await User.query(trx).where({ id: actor.userId, tenantId: actor.tenantId, active: true }).first();
  if (!user) throw notFound('User');
  let webauthnUserId = user.webauthnUserId;
  if (!webauthnUserId) {
    // An opaque handle, never the e-mail or the database id (WebAuthn §14.6.1 privacy).
    webauthnUserId = isoBase64URL.fromBuffer(randomBytes(32));
    await User.query(trx).where({ id: user.id, tenantId: actor.tenantId }).patch({ webauthnUserId });
  }
  const existing = await passkeyDescriptors(trx, actor.tenantId, user.id);
  const options = await generateRegistrationOptions({
    rpName: rp().rpName,
    rpID: rp().rpId,
    userName: user.email,
    userDisplayName: user.name,
    userID: isoBase64URL.toBuffer(webauthnUserId),
    attestationType: 'none',
    timeout: TIMEOUT_MS,
    excludeCredentials: existing.map((c) => ({ id: c.credentialId, transports: c.transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
  await storeChallenge(trx, user.id, actor.tenantId, 'registration', options.challenge);
  return options;
}

/** Spend the pending registration challenge (null when there is none or it expired). */
export async function takeRegistrationChallenge({ trx, actor }: CommandContext): Promise<string | null> {
  return takeChallenge(trx, actor.userId!, actor.tenantId, 'registration');
}

/** Verify the attestation against the challenge takeRegistrationChallenge spent, and store the passkey. */
export async function verifyRegistration({ trx, actor }: CommandContext, challenge: string | null, response: RegistrationResponseJSON): Promise<PasskeyView> {
  if (!challenge) throw invalidInput('No pending passkey registration; request new options');
  let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: acceptedOrigins(),
      expectedRPID: rp().rpId,
      requireUserVerification: false,
    });
  } catch (err) {
    logger.info({ err: String((err as Error).message), userId: actor.userId }, 'passkey registration rejected');
    throw invalidInput('The passkey registration could not be verified');
  }
  if (!verification.verified) throw invalidInput('The passkey registration could not be verified');
  const info = verification.registrationInfo;
  const [row]: PasskeyRow[] = await trx('webauthnCredentials')
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
}

/** Needs a fresh proof (shared/auth/freshProof.ts): a stolen token must not strip the account's second factor. */
export async function deletePasskey({ trx, actor }: CommandContext, id: string): Promise<void> {
  assertFreshProof(actor);
  const n = await trx('webauthnCredentials').where({ tenantId: actor.tenantId, userId: actor.userId, id }).delete();
  if (!n) throw notFound('Passkey');
  // Recovery codes are a fallback of a second factor: without any left they go (as disableTotp
  // does), or a later enrolment would bring the discarded codes back to life.
  if ((await countPasskeys(trx, actor.tenantId, actor.userId!)) === 0) {
    await User.query(trx).where({ tenantId: actor.tenantId, id: actor.userId, totpEnabled: false }).patch({ recoveryCodes: [], updatedAt: trx.fn.now() });
  }
  await audit(trx, actor, { action: 'user.passkey_removed', entityType: 'user', entityId: actor.userId, data: { id } });
}

/** Options for the second step of a login: the user's own credentials only. */
export async function authenticationOptions(ctx: AnonymousContext, challengeToken: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const user = await challengeUser(ctx.trx, challengeToken);
  if (!user) throw invalidChallenge();
  assertNotLocked(user);
  return assertionOptions(ctx.trx, user.tenantId, user.id);
}

/** Assertion options over the user's own passkeys, with the challenge stored for the answer (login and re-authentication alike). */
async function assertionOptions(trx: Knex.Transaction, tenantId: string, userId: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const creds = await passkeyDescriptors(trx, tenantId, userId);
  if (!creds.length) throw invalidInput('No passkey is registered for this account');
  const options = await generateAuthenticationOptions({
    rpID: rp().rpId,
    timeout: TIMEOUT_MS,
    userVerification: 'preferred',
    allowCredentials: creds.map((x) => ({ id: x.credentialId, transports: x.transports })),
  });
  await storeChallenge(trx, userId, tenantId, 'authentication', options.challenge);
  return options;
}

/** A counted passkey attempt: the challenge's user and the pending challenge it spent (null for none). */
export interface PasskeyAttempt {
  user: User;
  expectedChallenge: string | null;
}

/**
 * First part of a passkey login: count the attempt (429 while locked) and spend the pending
 * challenge. The caller commits both before the assertion is checked: a failure stays counted
 * and the challenge stays spent.
 */
export async function claimPasskeyAttempt(ctx: AnonymousContext, challengeToken: string): Promise<PasskeyAttempt> {
  const user = await challengeUser(ctx.trx, challengeToken);
  if (!user) throw invalidChallenge();
  await claimAttempt(ctx.trx, user.id);
  return { user, expectedChallenge: await takeChallenge(ctx.trx, user.id, user.tenantId, 'authentication') };
}

/**
 * Second part: a verified passkey (verifyPasskeyAssertion) completes the login, which resets the counters.
 */
export async function verifyAuthentication(ctx: AnonymousContext, attempt: PasskeyAttempt, response: AuthenticationResponseJSON): Promise<Session> {
  await verifyPasskeyAssertion(ctx.trx, attempt, response);
  return completeLogin(ctx, attempt.user, 'webauthn');
}

/**
 * The assertion must answer the spent challenge, come from one of this user's credentials, from
 * an accepted origin, and carry a signature counter above the stored one (a cloned authenticator
 * shows up as a counter that does not grow). 401 otherwise; the counter step is the only write.
 */
export async function verifyPasskeyAssertion(trx: Knex.Transaction, attempt: PasskeyAttempt, response: AuthenticationResponseJSON): Promise<void> {
  const { user, expectedChallenge } = attempt;
  const fail = (reason: string) => {
    logger.info({ userId: user.id, reason }, 'passkey assertion rejected');
    return unauthorized('The passkey could not be verified');
  };
  if (!expectedChallenge) throw fail('no pending challenge');
  const cred: PasskeyRow | undefined = await trx('webauthnCredentials').where({ tenantId: user.tenantId, userId: user.id, credentialId: response.id }).first();
  if (!cred) throw fail('unknown credential');
  let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: acceptedOrigins(),
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
  const n = await trx('webauthnCredentials')
    .where({ id: cred.id, tenantId: user.tenantId })
    .andWhere((q) => (newCounter > 0 ? q.where('counter', '<', newCounter) : q.where('counter', 0)))
    .update({ counter: newCounter, backedUp: verification.authenticationInfo.credentialBackedUp, updatedAt: trx.fn.now() });
  if (n !== 1) throw fail('counter');
}

/**
 * Options to prove a passkey again while logged in (POST /api/auth/reauthenticate with
 * `passkey`): the own credentials, a challenge stored like a login's.
 */
export async function reauthenticationOptions({ trx, actor }: CommandContext): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return assertionOptions(trx, actor.tenantId, actor.userId!);
}

/** Spend the pending authentication challenge of a logged-in user (null for none), with the attempt the caller claimed. */
export async function takeAuthenticationChallenge(trx: Knex.Transaction, user: User): Promise<string | null> {
  return takeChallenge(trx, user.id, user.tenantId, 'authentication');
}

const TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);
const knownTransports = (t: unknown): string[] => (Array.isArray(t) ? t.filter((x): x is string => typeof x === 'string' && TRANSPORTS.has(x)) : []);
