import jwt from 'jsonwebtoken';
import { config } from '../config';
import { sha256Hex } from '../crypto/secretBox';
import { unauthorized } from '../errors';

/**
 * The short-lived token between the password step and the second factor of a login. It has its
 * own audience, typ and a key derived from the access-token secret, so it can never pass as an
 * access token (and an access token never passes as a challenge).
 */
const ALGORITHM = 'HS256' as const;
const ISSUER = 'accounting-service';
const AUDIENCE = 'accounting-mfa';
export const CHALLENGE_TTL_SEC = 5 * 60;

export type SecondFactor = 'totp' | 'webauthn' | 'recovery';

const key = (secret: string) => sha256Hex(`mfa-challenge:${secret}`);

export function signChallengeToken(claims: { sub: string; tid: string; methods: SecondFactor[] }, opts: { ttlSec?: number; secret?: string } = {}): string {
  return jwt.sign({ tid: claims.tid, methods: claims.methods, typ: 'mfa' }, key(opts.secret ?? config().jwtAccessSecret), {
    algorithm: ALGORITHM,
    subject: claims.sub,
    issuer: ISSUER,
    audience: AUDIENCE,
    expiresIn: opts.ttlSec ?? CHALLENGE_TTL_SEC,
  });
}

export function verifyChallengeToken(token: string): { userId: string; tenantId: string; methods: SecondFactor[] } {
  let p: jwt.JwtPayload;
  try {
    p = jwt.verify(token, key(config().jwtAccessSecret), { algorithms: [ALGORITHM], issuer: ISSUER, audience: AUDIENCE }) as jwt.JwtPayload;
  } catch {
    throw unauthorized('The two-factor challenge is invalid or has expired; log in again');
  }
  if (p.typ !== 'mfa' || typeof p.sub !== 'string' || typeof p.tid !== 'string') {
    throw unauthorized('The two-factor challenge is invalid or has expired; log in again');
  }
  return { userId: p.sub, tenantId: p.tid, methods: Array.isArray(p.methods) ? p.methods : [] };
}
