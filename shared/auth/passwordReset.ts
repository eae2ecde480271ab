import { createHmac } from 'node:crypto';
import { config } from '../config';
import { sha256Hex } from '../crypto/secretBox';

/**
 * Password-reset tokens (docs/auth.md, "Password reset"): 256 bits, the HMAC-SHA256 of the reset
 * row's id under a key derived from JWT_ACCESS_SECRET. The database keeps only the token's SHA-256
 * and the e-mail job only the id, so neither a database copy nor the queue holds a usable link,
 * and a retried job sends the same link instead of a second one. Who holds the server secret can
 * derive a token, but could sign access tokens for anyone anyway.
 */
export const PASSWORD_RESET_TTL_MS = 30 * 60_000;

const key = (secret: string) => sha256Hex(`password-reset:${secret}`);

export const passwordResetToken = (resetId: string, secret = config().jwtAccessSecret) => createHmac('sha256', key(secret)).update(resetId).digest('base64url');

export const passwordResetTokenHash = (token: string) => sha256Hex(`password-reset:${token}`);

/** The link in the e-mail: the front end's reset page (PUBLIC_APP_URL, else PUBLIC_BASE_URL). */
export function passwordResetLink(token: string): string {
  const base = (config().publicAppUrl ?? config().publicBaseUrl).replace(/\/+$/, '');
  return `${base}/reset-password?token=${encodeURIComponent(token)}`;
}
