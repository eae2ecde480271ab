import { createHmac, timingSafeEqual } from 'node:crypto';
import { PayloadError, SignatureError } from './errors';
import { decimalToAmount, minorToDecimal, normalizeCurrency } from './currency';
import type { InboundRequest, ProviderSlug, VerifyContext } from './types';

/** Internal helpers shared by the adapters. Not part of the public surface (index.ts). */

export type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
export function obj(v: unknown): Json {
  return isObject(v) ? v : {};
}
export function str(v: unknown): string | null {
  return typeof v === 'string' && v.length > 0 ? v : null;
}
export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/**
 * One header, case-insensitively. A repeated signature header is refused rather than guessed at:
 * which copy would be the real one?
 */
export function getHeader(provider: ProviderSlug, req: InboundRequest, name: string): string | undefined {
  const wanted = name.toLowerCase();
  let found: string | undefined;
  let count = 0;
  for (const [key, value] of Object.entries(req.headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      count++;
      found = v;
    }
  }
  if (count > 1) throw new SignatureError(provider, 'malformed_header', `${name} header sent more than once`);
  return found?.trim();
}

export function requireSecret(provider: ProviderSlug, value: string | undefined, name: string): string {
  if (!value) throw new SignatureError(provider, 'not_configured', `the installation has no ${name}`);
  return value;
}

export function hmacSha256(secret: string, ...parts: Array<string | Buffer>): Buffer {
  const h = createHmac('sha256', secret);
  for (const p of parts) h.update(p);
  return h.digest();
}

/** Constant-time comparison of a hex signature with the expected digest. */
export function hexSignatureMatches(expected: Buffer, candidateHex: string): boolean {
  if (!/^[0-9a-fA-F]+$/.test(candidateHex) || candidateHex.length !== expected.length * 2) return false;
  const candidate = Buffer.from(candidateHex, 'hex');
  return candidate.length === expected.length && timingSafeEqual(candidate, expected);
}

/**
 * `t=<unix>,v1=<hex>[,v1=<hex>…]` as used by Stripe (and our bank provider): several v1 entries
 * appear while a secret is being rolled; other schemes (v0) are ignored.
 */
export function parseTimestampedSignature(provider: ProviderSlug, header: string | undefined, name: string): { t: number; v1: string[] } {
  if (!header) throw new SignatureError(provider, 'missing_header', `${name} header missing`);
  let t: number | null = null;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new SignatureError(provider, 'malformed_header', `${name} header is malformed`);
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== null || !/^\d{1,12}$/.test(value)) throw new SignatureError(provider, 'malformed_header', `${name} has a bad timestamp`);
      t = Number(value);
    } else if (key === 'v1') {
      v1.push(value);
    }
  }
  if (t === null) throw new SignatureError(provider, 'malformed_header', `${name} has no timestamp`);
  if (v1.length === 0) throw new SignatureError(provider, 'malformed_header', `${name} has no v1 signature`);
  return { t, v1 };
}

/**
 * Verifies a `t=…,v1=…` header: HMAC-SHA256 over `${t}.${rawBody}`, any v1 may match, and the
 * timestamp within `toleranceSec` of now in both directions (a future timestamp is as suspect
 * as an old one; 300 s leaves room for ordinary clock skew).
 */
export function verifyTimestampedHmac(
  provider: ProviderSlug,
  req: InboundRequest,
  headerName: string,
  secret: string,
  now: Date,
  toleranceSec = REPLAY_TOLERANCE_SEC,
): void {
  const { t, v1 } = parseTimestampedSignature(provider, getHeader(provider, req, headerName), headerName);
  const expected = hmacSha256(secret, `${t}.`, req.rawBody);
  if (!v1.some((candidate) => hexSignatureMatches(expected, candidate))) {
    throw new SignatureError(provider, 'mismatch', 'no signature matches the body and the secret');
  }
  assertWithinTolerance(provider, t, now, toleranceSec);
}

/** How far a signed send time may be from our clock, either way (Stripe's default). */
export const REPLAY_TOLERANCE_SEC = 300;

/**
 * Replay protection for a signed send time (unix seconds): a captured delivery cannot be replayed
 * later, and a future time is as suspect as an old one.
 */
export function assertWithinTolerance(provider: ProviderSlug, sentAtSec: number, now: Date, toleranceSec = REPLAY_TOLERANCE_SEC): void {
  if (!(Math.abs(Math.floor(now.getTime() / 1000) - sentAtSec) <= toleranceSec)) {
    throw new SignatureError(provider, 'timestamp_out_of_tolerance', `timestamp ${sentAtSec} is more than ${toleranceSec} s from now`);
  }
}

export function signTimestampedHmac(secret: string, body: string | Buffer, t: number): string {
  return `t=${t},v1=${hmacSha256(secret, `${t}.`, body).toString('hex')}`;
}

export function parseJsonObject(provider: ProviderSlug, rawBody: Buffer): Json {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new PayloadError(provider, 'body is not valid JSON');
  }
  if (!isObject(parsed)) throw new PayloadError(provider, 'body is not a JSON object');
  return parsed;
}

/**
 * Runs a mapper on a verified body and labels a PayloadError it throws with the provider event's
 * id and name, so the failed log row says which event could not be used.
 */
export function withEventIdentity<T>(eventId: unknown, eventType: unknown, map: () => T): T {
  try {
    return map();
  } catch (err) {
    if (err instanceof PayloadError) {
      err.eventId ??= str(eventId);
      err.eventType ??= str(eventType);
    }
    throw err;
  }
}

export function nowOf(ctx: { now?: Date }): Date {
  return ctx.now ?? new Date();
}

export function timeoutMs(ctx: VerifyContext): number {
  return ctx.config.providerHttpTimeoutMs ?? 10_000;
}

/** Unix seconds → { date: YYYY-MM-DD (UTC), occurredAt: ISO }. */
export function fromUnix(seconds: unknown): { date: string; occurredAt: string } | null {
  if (typeof seconds !== 'number' || !Number.isSafeInteger(seconds) || seconds <= 0) return null;
  const iso = new Date(seconds * 1000).toISOString();
  return { date: iso.slice(0, 10), occurredAt: iso };
}

/** RFC 3339 timestamp with any offset → { date (UTC), occurredAt (UTC ISO) }. */
export function fromIso(value: unknown): { date: string; occurredAt: string } | null {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(value)) return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return null;
  const iso = new Date(ms).toISOString();
  return { date: iso.slice(0, 10), occurredAt: iso };
}

export function currencyOrThrow(provider: ProviderSlug, value: unknown): string {
  const c = normalizeCurrency(value);
  if (!c) throw new PayloadError(provider, `bad currency ${JSON.stringify(value)}`);
  return c;
}

export function minorAmountOrThrow(provider: ProviderSlug, minor: unknown, currency: string, exponent?: number): string {
  if (typeof minor !== 'number' || !Number.isSafeInteger(minor) || minor < 0) {
    throw new PayloadError(provider, `bad amount ${JSON.stringify(minor)}`);
  }
  return minorToDecimal(minor, currency, exponent);
}

export function decimalAmountOrThrow(provider: ProviderSlug, value: unknown, currency: string): string {
  let amount: string;
  try {
    amount = decimalToAmount(value, currency);
  } catch (e) {
    throw new PayloadError(provider, (e as Error).message);
  }
  if (amount.startsWith('-')) throw new PayloadError(provider, `negative amount ${amount}`);
  return amount;
}

/** Keeps free text from a payload to a sane size before it reaches a database column. */
export function clip(v: unknown, max = 500): string | null {
  const s = str(v);
  return s === null ? null : s.length > max ? s.slice(0, max) : s;
}
