import jwt from 'jsonwebtoken';
import { createSecretKey, type KeyObject } from 'node:crypto';
import { config } from '../config';
import { tokenExpired, unauthorized } from '../errors';
import type { Actor, Role } from '../actor';

/**
 * Access tokens: JWT HS256, 15 minutes. The algorithm is pinned on verify, so tokens with
 * alg "none" or any other algorithm are rejected, as are tokens signed with another key.
 */
const ALGORITHM = 'HS256' as const;
const ISSUER = 'accounting-service';
const AUDIENCE = 'accounting-api';

/**
 * The HMAC key as a KeyObject, made once per secret: given a string, jsonwebtoken first tries to
 * parse it as a PEM public key on every call, which cost about a tenth of the API's CPU.
 */
const keys = new Map<string, KeyObject>();
function keyFor(secret: string): KeyObject {
  let k = keys.get(secret);
  if (!k) {
    k = createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, k);
  }
  return k;
}

export interface AccessClaims {
  sub: string;
  tid: string;
  role: Role;
  /** Set only by a login or a re-authentication: the proof's time (unix s) and methods (docs/auth.md, "Fresh proof"). */
  authTime?: number;
  amr?: string[];
}

export function signAccessToken(claims: AccessClaims, opts: { ttlSec?: number; secret?: string } = {}): string {
  const proof = claims.authTime !== undefined ? { auth_time: claims.authTime, amr: claims.amr ?? [] } : {};
  return jwt.sign({ tid: claims.tid, role: claims.role, typ: 'access', ...proof }, keyFor(opts.secret ?? config().jwtAccessSecret), {
    algorithm: ALGORITHM,
    subject: claims.sub,
    issuer: ISSUER,
    audience: AUDIENCE,
    expiresIn: opts.ttlSec ?? config().jwtAccessTtlSec,
  });
}

/**
 * Tokens that verified, by secret and token text, with their expiry. Every API request verifies
 * its token, mostly the same few per client; the HMAC, base64 and JSON work was a twentieth of the
 * single-invoice read's CPU (docs/benchmarks.md). Only the exact bytes that verified are cached,
 * and expiry is checked on every hit exactly as jsonwebtoken does (expired when now ≥ exp).
 * Deactivation and role changes are not a token matter: authenticate() reads the user's state.
 */
const VERIFIED_MAX = 10_000;
const verified = new Map<string, { actor: Actor; exp: number }>();
const verifiedKey = (secret: string, token: string) => `${secret}\u0000${token}`;

export function verifyAccessToken(token: string, secret = config().jwtAccessSecret): Actor {
  const cacheKey = verifiedKey(secret, token);
  const hit = verified.get(cacheKey);
  if (hit) {
    if (Math.floor(Date.now() / 1000) >= hit.exp) {
      verified.delete(cacheKey);
      throw tokenExpired();
    }
    return { ...hit.actor, ...(hit.actor.amr ? { amr: [...hit.actor.amr] } : {}) };
  }
  return verifyUncached(token, secret);
}

function verifyUncached(token: string, secret: string): Actor {
  let payload: jwt.JwtPayload;
  try {
    payload = jwt.verify(token, keyFor(secret), { algorithms: [ALGORITHM], issuer: ISSUER, audience: AUDIENCE }) as jwt.JwtPayload;
  } catch (err) {
    if (err instanceof jwt.TokenExpiredError) throw tokenExpired();
    throw unauthorized('Invalid access token');
  }
  const role = payload.role as Role;
  if (
    payload.typ !== 'access' ||
    typeof payload.sub !== 'string' ||
    typeof payload.tid !== 'string' ||
    !['admin', 'manager', 'member', 'viewer'].includes(role)
  ) {
    throw unauthorized('Invalid access token');
  }
  const actor: Actor = { userId: payload.sub, tenantId: payload.tid, role };
  if (typeof payload.auth_time === 'number' && Array.isArray(payload.amr)) {
    actor.authTime = payload.auth_time;
    actor.amr = payload.amr.filter((m): m is string => typeof m === 'string');
  }
  if (typeof payload.exp === 'number') {
    if (verified.size >= VERIFIED_MAX) verified.clear();
    verified.set(verifiedKey(secret, token), { actor, exp: payload.exp });
  }
  return { ...actor };
}
