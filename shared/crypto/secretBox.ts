import { createCipheriv, createDecipheriv, randomBytes, createHash, timingSafeEqual } from 'node:crypto';
import { config } from '../config';

/**
 * Secrets at rest (tax portal credentials, provider secrets, TOTP seeds, webhook URL tokens) are
 * AES-256-GCM encrypted with ENCRYPTION_KEY. Format: "v1.<iv>.<tag>.<ciphertext>" in base64url,
 * so a key rotation can introduce v2 without guessing.
 */
export function encryptSecret(plain: string, key: Buffer = config().encryptionKey): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return ['v1', iv.toString('base64url'), tag.toString('base64url'), ct.toString('base64url')].join('.');
}

export function decryptSecret(sealed: string, key: Buffer = config().encryptionKey): string {
  const [version, iv, tag, ct] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || ct === undefined) throw new Error('Unsupported secret format');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}

export const encryptJson = (value: unknown) => encryptSecret(JSON.stringify(value));
export const decryptJson = <T>(sealed: string): T => JSON.parse(decryptSecret(sealed)) as T;

export const sha256Hex = (value: string | Buffer) => createHash('sha256').update(value).digest('hex');

/** Constant-time string comparison (hash both sides so lengths never leak or throw). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

export const randomToken = (bytes = 32) => randomBytes(bytes).toString('base64url');
