import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../crypto/secretBox';

/**
 * Recovery codes: 10 one-time codes shown once when TOTP is enabled, stored as SHA-256 hashes
 * (each carries 50 random bits, so a fast hash is enough; they are single-use and attempts count
 * toward the lockout). Format "xxxxx-xxxxx" in a base32 alphabet without look-alikes.
 */
export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

function oneCode(): string {
  const bytes = randomBytes(10);
  let s = '';
  for (const b of bytes) s += ALPHABET[b % ALPHABET.length];
  return `${s.slice(0, 5)}-${s.slice(5)}`;
}

export const normalizeRecoveryCode = (code: string) => code.trim().toLowerCase().replace(/[\s-]/g, '');
export const hashRecoveryCode = (code: string) => sha256Hex(`recovery:${normalizeRecoveryCode(code)}`);

export function newRecoveryCodes(): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, oneCode);
  return { codes, hashes: codes.map(hashRecoveryCode) };
}

export const looksLikeRecoveryCode = (code: string) => /^[a-z0-9]{10}$/.test(normalizeRecoveryCode(code));
