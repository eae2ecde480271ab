import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { runInTransaction } from './outbox';
import { AppError, duplicate, invalidInput } from './errors';
import { storableJson } from './storable';

/**
 * Idempotency-Key for POSTs that create money-relevant records (Stripe's scheme; docs/invoices.md,
 * "Idempotency"): same key + same body within 24 h replays the first response, another body is 409
 * DUPLICATE. The key row is inserted first, in the work's transaction: a concurrent duplicate
 * blocks on it, then replays the committed response, so the work never runs twice. A failure
 * rolls the key row back with the work: errors are not stored.
 */
export const IDEMPOTENCY_TTL_HOURS = 24;

export interface IdempotentResponse {
  status: number;
  body: unknown;
}

/** JSON with sorted object keys, so {"a":1,"b":2} and {"b":2,"a":1} hash alike. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value as object)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export const requestHash = (request: unknown) => createHash('sha256').update(canonicalJson(request)).digest('hex');

export function checkIdempotencyKey(key: string): void {
  if (key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
    throw invalidInput('Invalid Idempotency-Key header', [{ field: 'Idempotency-Key', message: 'must be 1-255 visible ASCII characters' }]);
  }
}

/**
 * Run `work` in a transaction, at most once per (tenant, route, key). Without a key it simply
 * runs. Returns the response and whether it was replayed.
 */
export async function withIdempotency(
  opts: { tenantId: string; route: string; key?: string | null; request: unknown },
  work: (trx: Knex.Transaction) => Promise<IdempotentResponse>,
): Promise<IdempotentResponse & { replayed: boolean }> {
  if (!opts.key) return { ...(await runInTransaction(work)), replayed: false };
  checkIdempotencyKey(opts.key);
  const hash = requestHash(opts.request);
  const where = { tenantId: opts.tenantId, route: opts.route, key: opts.key };
  return runInTransaction(async (trx) => {
    const inserted = await trx('idempotencyKeys')
      .insert({ ...where, requestHash: hash })
      .onConflict(['tenantId', 'route', 'key'])
      .ignore()
      .returning('key');
    if (!inserted.length) {
      const row = await trx('idempotencyKeys').where(where).forUpdate().first();
      const ageMs = Date.now() - new Date(row.createdAt).getTime();
      if (ageMs > IDEMPOTENCY_TTL_HOURS * 3600_000) {
        // An expired key starts afresh.
        await trx('idempotencyKeys').where(where).update({ requestHash: hash, responseStatus: null, responseBody: null, createdAt: trx.fn.now() });
      } else if (row.requestHash !== hash) {
        throw duplicate('This Idempotency-Key was already used with a different request body');
      } else if (row.responseStatus == null) {
        throw new AppError('DUPLICATE', 409, 'A request with this Idempotency-Key is still in progress');
      } else {
        return { status: row.responseStatus, body: row.responseBody, replayed: true };
      }
    }
    const res = await work(trx);
    await trx('idempotencyKeys')
      .where(where)
      // Stored as jsonb: storable (shared/storable.ts), so that keeping the answer for replays can
      // never fail the request that produced it.
      .update({ responseStatus: res.status, responseBody: storableJson(res.body) });
    return { ...res, replayed: false };
  });
}

/** Housekeeping: drop keys older than the TTL (run from a maintenance job). */
export async function purgeExpiredIdempotencyKeys(db: Knex): Promise<number> {
  return db('idempotencyKeys')
    .where('createdAt', '<', db.raw(`now() - interval '${IDEMPOTENCY_TTL_HOURS} hours'`))
    .delete();
}
