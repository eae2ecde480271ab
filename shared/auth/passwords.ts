import argon2 from 'argon2';

/** Passwords: argon2id (OWASP parameters), at least 10 characters (docs/auth.md, "Registration"). */
export const MIN_PASSWORD_LENGTH = 10;

export const hashPassword = (plain: string) => argon2.hash(plain, { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 });

export async function verifyPassword(hash: string, plain: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, plain);
  } catch {
    return false;
  }
}

/** Verifying against this when the e-mail is unknown keeps both paths equally slow (no enumeration). */
let dummyHash: Promise<string> | null = null;
export const dummyPasswordHash = () => (dummyHash ??= hashPassword('not-a-real-password-000'));
