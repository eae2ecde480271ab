import { recordWebhookOutcome } from '../metrics';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { db, runCompiledSql } from '../db';
import { AppError, notFound, serviceUnavailable } from '../errors';
import { logger } from '../logger';
import { OUTBOX_CHANNEL, outboxRow, type OutboxJob } from '../outbox';
import { decryptJson, sha256Hex } from '../crypto/secretBox';
import { withoutNul } from '../nulCharacter';
import {
  getAdapter,
  isProviderSlug,
  PayloadError,
  ProviderUnavailableError,
  SignatureError,
  type NormalizedEvent,
  type PaymentProviderConfig,
  type ProviderSecrets,
  type ProviderSlug,
} from '../providers/payments';

export interface InstallationRow {
  id: string;
  tenantId: string;
  provider: ProviderSlug;
  secretsEnc: string;
  settings: Record<string, unknown>;
}

/** The active installation a URL token belongs to (looked up by the token's SHA-256). */
export async function findInstallationByToken(k: Knex | Knex.Transaction, provider: string, token: string): Promise<InstallationRow | undefined> {
  if (!isProviderSlug(provider) || !token) return undefined;
  return k('connectorInstallations').where({ tokenHash: sha256Hex(token), provider, active: true }).first();
}

/**
 * Per-process cache of the token lookup (and the decrypted secrets), for TOKEN_CACHE_MS: a
 * delivery otherwise pays one query and one AES-GCM decrypt before it verifies anything. Only
 * found installations are cached, so a new install answers at once everywhere. Install (token
 * rotation) and uninstall call invalidateInstallationCache() after their commit: the old URL is
 * 404 at once on the process that served the change, and on other API processes within the TTL.
 * A lookup that started before an invalidation is not stored (generation check), so a read that
 * raced the rotation's commit cannot put the old token back for a whole TTL.
 */
export const TOKEN_CACHE_MS = 5_000;
const TOKEN_CACHE_MAX = 10_000;
interface CachedInstallation {
  installation: InstallationRow;
  /** Decrypted on first use (a decrypt error stays in the verification's error handling). */
  secrets?: ProviderSecrets;
  expires: number;
}
const tokenCache = new Map<string, CachedInstallation>();
let tokenCacheGeneration = 0;

export function invalidateInstallationCache(): void {
  tokenCacheGeneration++;
  tokenCache.clear();
}

async function cachedInstallation(provider: string, token: string): Promise<CachedInstallation | undefined> {
  if (!isProviderSlug(provider) || !token) return undefined;
  const key = `${provider}:${sha256Hex(token)}`;
  const hit = tokenCache.get(key);
  const now = Date.now();
  if (hit && hit.expires > now) return hit;
  if (hit) tokenCache.delete(key);
  const generation = tokenCacheGeneration;
  const installation = await findInstallationByToken(db(), provider, token);
  if (!installation) return undefined;
  const entry: CachedInstallation = { installation, expires: now + TOKEN_CACHE_MS };
  if (generation === tokenCacheGeneration) {
    if (tokenCache.size >= TOKEN_CACHE_MAX) tokenCache.clear();
    tokenCache.set(key, entry);
  }
  return entry;
}

export interface IngestResult {
  eventRowId: string;
  /**
   * pending: stored and queued; duplicate: the movement (or event) was already booked; failed:
   * authentic but unusable, logged failed (answered 200, so the provider stops redelivering it).
   */
  status: 'pending' | 'duplicate' | 'failed';
}

export const PROCESS_JOB = 'process-webhook-event';
export const jobIdFor = (eventRowId: string) => `webhook-${eventRowId}`;

const invalidSignature = () => new AppError('INVALID_INPUT', 400, 'Webhook signature verification failed');

/**
 * POST /api/payment-import/<provider>/<token> after the transport checks (HTTPS, rate limit, body
 * size). Order (decisions.md): the token first — its installation holds the secret — so an
 * unknown token is 404 whatever the signature; then the adapter verifies (timing-safe, in the
 * adapter); then the verified event is stored durably with its job in the outbox, in one
 * statement (storeVerifiedEvent), and the provider gets 200 only after it committed. Processing happens in the worker.
 *
 * Log rows: invalid_signature (400) and failed are written here; duplicate when the money
 * movement is already booked (fast path, 200); otherwise pending, finished by the job. An
 * authentic payload we cannot map (PayloadError) is logged failed and answered 200: decisions.md
 * has a verified delivery end processed or failed, and a 4xx would only make the provider
 * redeliver the same bytes for days (Stripe up to 3 days, PayPal 25 times) with the same outcome.
 */
export async function ingestDelivery(args: {
  provider: string;
  token: string;
  rawBody: Buffer;
  headers: Record<string, string | string[] | undefined>;
  config: PaymentProviderConfig;
}): Promise<IngestResult> {
  let found: CachedInstallation | undefined;
  try {
    found = await cachedInstallation(args.provider, args.token);
  } catch (err) {
    logger.error({ err: String(err) }, 'webhook: installation lookup failed');
    throw serviceUnavailable('The webhook could not be accepted right now; please redeliver', 5);
  }
  if (!found) throw notFound('Webhook endpoint');
  const { installation } = found;
  const provider = installation.provider;

  let event: NormalizedEvent;
  try {
    const secrets = (found.secrets ??= decryptJson<ProviderSecrets>(installation.secretsEnc));
    // Verified first, then cleaned: a U+0000 in a payer's name must not make the store fail and
    // the provider redeliver the same bytes for days (the database cannot hold the character).
    event = withoutNul(await getAdapter(provider).verifyAndParse({ rawBody: args.rawBody, headers: args.headers }, { secrets, config: args.config }));
  } catch (err) {
    if (err instanceof SignatureError) {
      await logRejected(installation, 'invalid_signature', `${err.reason}: ${err.message}`);
      throw invalidSignature();
    }
    if (err instanceof PayloadError) {
      // The 200 promises the delivery is on record: if even the log row cannot be written, 503 so
      // that the provider redelivers.
      try {
        const eventRowId = await insertRejectedRow(installation, 'failed', err.message, { eventId: err.eventId, eventType: err.eventType });
        return { eventRowId, status: 'failed' };
      } catch (dbErr) {
        logger.error({ err: String(dbErr), provider }, 'webhook: could not log an unusable event');
        throw serviceUnavailable('The webhook could not be stored; please redeliver', 5);
      }
    }
    if (err instanceof ProviderUnavailableError) {
      // Mollie's API (or PayPal's certificate host) is down: nothing is stored, the provider redelivers.
      await logRejected(installation, 'failed', `${err.message} (answered 503; the provider redelivers)`);
      throw serviceUnavailable('The payment provider could not be reached to verify this webhook; please redeliver', err.retryAfterSec ?? 60);
    }
    throw err;
  }

  let stored: IngestResult;
  try {
    stored = await storeVerifiedEvent(installation, event);
  } catch (err) {
    logger.error({ err: String(err), provider }, 'webhook: could not store a verified event');
    throw serviceUnavailable('The webhook could not be stored; please redeliver', 5);
  }
  return stored;
}

/**
 * The durable store, as ONE autocommitted statement (a data-modifying CTE): the duplicate fast
 * path, the log row and — when pending — its outbox row commit together or not at all, exactly
 * like the transaction it replaces (BEGIN, select, insert, insert, COMMIT: five round trips, now
 * one). The row id is generated here so the job id and payload are known before the statement.
 * With the outbox row the statement notifies the workers' relays (delivered on commit; see
 * outboxRow): the answer waits for neither Redis nor BullMQ, and the relay adds the jobs of many
 * deliveries at once.
 */
async function storeVerifiedEvent(installation: InstallationRow, event: NormalizedEvent): Promise<IngestResult> {
  const k = db();
  const eventRowId = randomUUID();
  const job: OutboxJob = { queue: 'webhooks', name: PROCESS_JOB, jobId: jobIdFor(eventRowId), data: { eventRowId, tenantId: installation.tenantId } };
  const ob = outboxRow(job);
  const dup = alreadyBookedSql(installation.tenantId, event);
  const text = `with ev as (
       insert into webhook_events (id, tenant_id, connector_id, provider, event, status, external_id, money_external_id, normalized, invoice_id, processed_at)
       select cast(? as uuid), ?, ?, ?, ?, case when d.dup then 'duplicate' else 'pending' end, ?, ?, cast(? as jsonb),
              case when d.dup then d.invoice_id end, case when d.dup then now() end
         from (select ${dup.dup} as dup, ${dup.invoiceId} as invoice_id) d
       returning status
     ), ob as (
       insert into outbox (prefix, queue, job_name, job_id, payload)
       select ?, ?, ?, ?, cast(? as jsonb) from ev where ev.status = 'pending'
       returning id
     )
     select ev.status, (select count(*) from (select pg_notify(?, ?) from ob) n) as notified from ev`;
  const bindings = [
    eventRowId, installation.tenantId, installation.id, installation.provider, event.eventType.slice(0, 200),
    event.eventId.slice(0, 500), event.externalId ?? null, JSON.stringify(event),
    ...dup.bindings,
    ob.prefix, ob.queue, ob.jobName, ob.jobId, ob.payload,
    OUTBOX_CHANNEL, ob.prefix,
  ];
  // Prepared (planned once per connection) and compiled once per text: the text depends only on
  // the event's shape (how many money movements), so there are few of them.
  const [row] = await runCompiledSql<{ status: 'pending' | 'duplicate' }>(k, text, bindings);
  if (row.status === 'duplicate') {
    recordWebhookOutcome(installation.provider, 'duplicate');
    return { eventRowId, status: 'duplicate' };
  }
  return { eventRowId, status: 'pending' };
}

/**
 * Fast path, not the guarantee: every money movement of the event (Mollie's related ones too)
 * already has its invoice, or a non-booking event was processed before. Races past this check are
 * caught by the job under its lock and the unique index. Returned as SQL expressions for the
 * store's single statement (dup: boolean, invoiceId: the main movement's invoice).
 */
function alreadyBookedSql(tenantId: string, event: NormalizedEvent): { dup: string; invoiceId: string; bindings: Knex.Value[] } {
  const no = { dup: 'false', invoiceId: 'null::uuid', bindings: [] as Knex.Value[] };
  const movements = [...(event.related ?? []), event].filter((e) => e.kind === 'payment' || e.kind === 'refund');
  if (event.kind === 'payment' || event.kind === 'refund') {
    const ids = movements.map((e) => e.externalId).filter((x): x is string => !!x);
    if (ids.length !== movements.length) return no;
    const distinct = [...new Set(ids)];
    // One invoice per (tenant, source, external id): the unique index invoices_external_unique.
    // One equality lookup per movement, not `external_id = any(array)`: a prepared statement's
    // generic plan made while the table had no statistics kept the array as a filter over all
    // of the tenant's invoices (2,000 buffers per delivery at 6,000 invoices, growing with them).
    const booked = '(select id from invoices where tenant_id = ? and source = ? and external_id = ?)';
    return {
      dup: distinct.map(() => `${booked} is not null`).join(' and '),
      invoiceId: booked,
      bindings: [...distinct.flatMap((id) => [tenantId, event.provider, id]), tenantId, event.provider, event.externalId],
    };
  }
  if (movements.length) return no;
  return {
    dup: "exists (select 1 from webhook_events where tenant_id = ? and provider = ? and external_id = ? and status = 'processed')",
    invoiceId: 'null::uuid',
    bindings: [tenantId, event.provider, event.eventId],
  };
}

async function logRejected(installation: InstallationRow, status: 'invalid_signature' | 'failed', error: string): Promise<void> {
  try {
    await insertRejectedRow(installation, status, error);
  } catch (err) {
    // The rejection itself stands; losing its log row must not turn a 400 into a 500.
    logger.error({ err: String(err) }, 'webhook: could not write the rejection log row');
  }
}

async function insertRejectedRow(
  installation: InstallationRow,
  status: 'invalid_signature' | 'failed',
  error: string,
  identity: { eventId?: string | null; eventType?: string | null } = {},
): Promise<string> {
  recordWebhookOutcome(installation.provider, status);
  const [row] = await db()('webhookEvents')
    .insert({
      tenantId: installation.tenantId,
      connectorId: installation.id,
      provider: installation.provider,
      // Payload text (ids, the parser's message) may carry U+0000, which no text column holds.
      event: withoutNul(identity.eventType?.slice(0, 200)) ?? null,
      externalId: withoutNul(identity.eventId?.slice(0, 500)) ?? null,
      status,
      error: withoutNul(error.slice(0, 1000)),
      processedAt: db().fn.now(),
    })
    .returning('id');
  return row.id;
}
