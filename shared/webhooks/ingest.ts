import { recordWebhookOutcome } from '../metrics';
import type { Knex } from 'knex';
import { db } from '../db';
import { AppError, notFound, serviceUnavailable } from '../errors';
import { logger } from '../logger';
import { enqueueAfterCommit, runInTransaction } from '../outbox';
import { decryptJson, sha256Hex } from '../crypto/secretBox';
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
 * transaction, and the provider gets 200. Processing happens in the worker.
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
  let installation: InstallationRow | undefined;
  try {
    installation = await findInstallationByToken(db(), args.provider, args.token);
  } catch (err) {
    logger.error({ err: String(err) }, 'webhook: installation lookup failed');
    throw serviceUnavailable('The webhook could not be accepted right now; please redeliver', 5);
  }
  if (!installation) throw notFound('Webhook endpoint');
  const provider = installation.provider;

  let event: NormalizedEvent;
  try {
    const secrets = decryptJson<ProviderSecrets>(installation.secretsEnc);
    event = await getAdapter(provider).verifyAndParse({ rawBody: args.rawBody, headers: args.headers }, { secrets, config: args.config });
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
    // The outbox row commits with the event; runInTransaction sends the job right after commit
    // when Redis is up, and the workers' periodic relay does it otherwise.
    stored = await runInTransaction(async (trx) => {
      const dup = await alreadyBooked(trx, installation.tenantId, event);
      const [row] = await trx('webhookEvents')
        .insert({
          tenantId: installation.tenantId,
          connectorId: installation.id,
          provider,
          event: event.eventType.slice(0, 200),
          status: dup ? 'duplicate' : 'pending',
          externalId: event.eventId.slice(0, 500),
          moneyExternalId: event.externalId,
          normalized: JSON.stringify(event),
          invoiceId: dup?.invoiceId ?? null,
          processedAt: dup ? trx.fn.now() : null,
        })
        .returning('id');
      if (dup) {
        recordWebhookOutcome(provider, 'duplicate');
        return { eventRowId: row.id, status: 'duplicate' as const };
      }
      await enqueueAfterCommit(trx, { queue: 'webhooks', name: PROCESS_JOB, jobId: jobIdFor(row.id), data: { eventRowId: row.id, tenantId: installation.tenantId } });
      return { eventRowId: row.id, status: 'pending' as const };
    });
  } catch (err) {
    logger.error({ err: String(err), provider }, 'webhook: could not store a verified event');
    throw serviceUnavailable('The webhook could not be stored; please redeliver', 5);
  }
  return stored;
}

/**
 * Fast path, not the guarantee: every money movement of the event (Mollie's related ones too)
 * already has its invoice, or a non-booking event was processed before. Races past this check are
 * caught by the job under its lock and the unique index.
 */
async function alreadyBooked(trx: Knex.Transaction, tenantId: string, event: NormalizedEvent): Promise<{ invoiceId: string | null } | null> {
  const movements = [...(event.related ?? []), event].filter((e) => e.kind === 'payment' || e.kind === 'refund');
  if (event.kind === 'payment' || event.kind === 'refund') {
    const ids = movements.map((e) => e.externalId).filter((x): x is string => !!x);
    if (ids.length !== movements.length) return null;
    const rows = await trx('invoices').where({ tenantId, source: event.provider }).whereIn('externalId', ids).select('id', 'externalId');
    if (rows.length !== new Set(ids).size) return null;
    return { invoiceId: rows.find((r) => r.externalId === event.externalId)?.id ?? null };
  }
  if (movements.length) return null;
  const earlier = await trx('webhookEvents').where({ tenantId, provider: event.provider, externalId: event.eventId, status: 'processed' }).first('id');
  return earlier ? { invoiceId: null } : null;
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
      event: identity.eventType?.slice(0, 200) ?? null,
      externalId: identity.eventId?.slice(0, 500) ?? null,
      status,
      error: error.slice(0, 1000),
      processedAt: db().fn.now(),
    })
    .returning('id');
  return row.id;
}
