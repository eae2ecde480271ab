import { nowMs } from '../clock';
import { AppError } from '../errors';
import type { Actor } from '../actor';

/**
 * Fresh proof for actions that would let a stolen access token take an account over (removing a
 * passkey, enrolling TOTP, new recovery codes): the user must have shown a password or second
 * factor within FRESH_PROOF_SEC. The proof travels in the access token as OpenID Connect's
 * `auth_time` and `amr` claims, set by a login and by POST /api/auth/reauthenticate and never by
 * a refresh, so the server keeps no state for it (docs/auth.md, "Fresh proof").
 */
export const FRESH_PROOF_SEC = 5 * 60;

/** RFC 8176 method names: pwd (password), otp (TOTP or a recovery code, both one-time codes), hwk (a passkey). */
export type ProofMethod = 'pwd' | 'otp' | 'hwk';
export const SECOND_FACTOR_PROOFS: readonly ProofMethod[] = ['otp', 'hwk'];

/** The claims of a proof made now. */
export const proofNow = (amr: ProofMethod[]) => ({ authTime: Math.floor(nowMs() / 1000), amr });

/**
 * 401 as RFC 9470 (OAuth 2.0 Step-Up Authentication) answers it: the token is fine, the
 * authentication behind it is too old or too weak. The client re-authenticates and retries.
 */
function insufficient(message: string): AppError {
  return new AppError('UNAUTHORIZED', 401, message, undefined, {
    'WWW-Authenticate': `Bearer error="insufficient_user_authentication", max_age=${FRESH_PROOF_SEC}`,
  });
}

export function assertFreshProof(actor: Actor, need: 'any' | 'second-factor' = 'any'): void {
  const age = actor.authTime === undefined ? Number.POSITIVE_INFINITY : nowMs() / 1000 - actor.authTime;
  const fresh = age <= FRESH_PROOF_SEC;
  if (need === 'any' && fresh && actor.amr?.length) return;
  if (need === 'second-factor' && fresh && actor.amr?.some((m) => SECOND_FACTOR_PROOFS.includes(m as ProofMethod))) return;
  throw insufficient(
    need === 'any'
      ? 'Confirm it is you: this needs a password or second factor from the last 5 minutes (POST /api/auth/reauthenticate, then retry with the new token)'
      : 'Confirm it is you: this needs a second factor from the last 5 minutes (POST /api/auth/reauthenticate with a code, or log in again with a passkey)',
  );
}
