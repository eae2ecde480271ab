import { recordWebhookOutcome, setWebhookStoreWaitingSource, webhookStoreBatchDeliveries } from '../metrics';
import { config } from '../config';
import { randomUUID } from 'node:crypto';
import { Batches } from '../batches';
import { db, runCompiledSql } from '../db';
import { AppError, notFound, serviceUnavailable } from '../errors';
import { logger } from '../logger';
import { OUTBOX_CHANNEL } from '../outbox';
import { jobs } from '../jobs/catalog';
import { decryptJson } from '../crypto/secretBox';
import { isStorable, storable } from '../storable';
import {
  getAdapter,
  PayloadError,
  ProviderUnavailableError,
  SignatureError,
  type NormalizedEvent,
  type PaymentProviderConfig,
  type ProviderSecrets,
} from '../providers/payments';
import { cachedInstallation, type CachedInstallation, type InstallationRow } from '../queries/connectorInstallations';
import { WebhookEvent } from '../models/WebhookEvent';

export interface IngestResult {
  eventRowId: string;
  /**
   * pending: stored and queued; duplicate: the movement (or event) was already booked; failed:
   * authentic but unusable, logged failed (answered 200, so the provider stops redelivering it).
   */
  status: 'pending' | 'duplicate' | 'failed';
}

const invalidSignature = () => new AppError('INVALID_INPUT', 400, 'Webhook signature verification failed');

/**
 * POST /api/payment-import/<provider>/<token> after the transport checks. The token first (its
 * installation holds the secret: unknown → 404 whatever the signature), then the adapter verifies,
 * then the event is stored with its outbox row (storeVerifiedEvents) and 200 is answered only after
 * that committed. An authentic payload we cannot map is logged failed and answered 200: a 4xx only
 * brings redeliveries. Every case: docs/webhooks.md, "Inbound: what we answer when".
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
  /** The delivery's bytes, kept with the row when what is stored of it had to be changed (see below). */
  let rawBody: Buffer | null = null;
  try {
    found.secrets ??= decryptJson<ProviderSecrets>(installation.secretsEnc);
    const secrets = found.secrets;
    // Verified first, then made storable: a U+0000 or a lone surrogate (`"\ud800"`, valid JSON) in
    // a payer's name must not make the store fail and the provider redeliver the same bytes for days
    // (json/jsonb cannot hold either). The stored event has them removed / replaced by U+FFFD
    // (shared/storable.ts), and the row keeps the bytes as received (raw_body).
    const parsed = await getAdapter(provider).verifyAndParse({ rawBody: args.rawBody, headers: args.headers }, { secrets, config: args.config });
    event = storable(parsed);
    if (event !== parsed) rawBody = args.rawBody;
  } catch (err) {
    if (err instanceof SignatureError) {
      await logRejected(installation, 'invalid_signature', `${err.reason}: ${err.message}`);
      throw invalidSignature();
    }
    if (err instanceof PayloadError) {
      // The 200 promises the delivery is on record: if even the log row cannot be written, 503 so
      // that the provider redelivers.
      try {
        const identity = { eventId: err.eventId, eventType: err.eventType };
        const kept = isStorable([err.message, identity]) ? null : args.rawBody;
        const eventRowId = await insertRejectedRow(installation, 'failed', err.message, identity, kept);
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
    stored = await storeBatches().run({ installation, event, rawBody });
  } catch (err) {
    if (isDataException(err)) {
      // The database refused a value of this event itself (SQLSTATE class 22), not our
      // connection: every redelivery would be refused alike, so a 503 would never end. Like an
      // authentic payload we cannot map, it is logged failed with the reason and the bytes as
      // received, and answered 200.
      try {
        const reason = `the event could not be stored: ${(err as Error).message}`;
        const eventRowId = await insertRejectedRow(installation, 'failed', reason, { eventId: event.eventId, eventType: event.eventType }, args.rawBody);
        logger.warn({ provider, eventRowId, err: String(err) }, 'webhook: a verified event the database refused is logged failed');
        return { eventRowId, status: 'failed' };
      } catch (dbErr) {
        logger.error({ err: String(dbErr), provider }, 'webhook: could not log an event the database refused');
      }
    }
    logger.error({ err: String(err), provider }, 'webhook: could not store a verified event');
    throw serviceUnavailable('The webhook could not be stored; please redeliver', 5);
  }
  return stored;
}

/** SQLSTATE class 22 (data exception): the value itself is refused, whenever it is sent. */
const isDataException = (err: unknown) => /^22/.test(String((err as { code?: unknown })?.code ?? ''));

/**
 * The duplicate check per row of the store statement: one invoice per (tenant, source, external
 * id), invoices_external_unique. Both checks are scalar subqueries so that the generic plan cannot
 * turn them into a join or hashed subplan that reads all of a tenant's invoices (docs/webhooks.md,
 * "Store batches"; docs/benchmarks.md, "PostgreSQL's share").
 */
const DUPLICATE_SQL = `case v.booked_check
       when 'money' then not exists (
         select 1 from unnest(v.money_ids) m(external_id)
          where (select i.id from invoices i where i.tenant_id = v.tenant_id and i.source = v.provider and i.external_id = m.external_id) is null)
       when 'event' then (
         select 1 from webhook_events w
          where w.tenant_id = v.tenant_id and w.provider = v.provider and w.external_id = v.external_id and w.status = 'processed' limit 1) is not null
       else false end`;
/** The main movement's invoice, for a duplicate's log row. */
const BOOKED_INVOICE_SQL = '(select i.id from invoices i where i.tenant_id = d.tenant_id and i.source = d.provider and i.external_id = d.money_external_id)';

interface VerifiedDelivery {
  installation: InstallationRow;
  /** Storable (shared/storable.ts). */
  event: NormalizedEvent;
  /** The bytes as received when event had to be changed to be storable; null otherwise. */
  rawBody: Buffer | null;
}
/**
 * Verified deliveries stored in batches (shared/batches.ts): concurrent deliveries share one
 * statement's round trip, plan and commit; each is answered only after its row committed. A failed
 * batch stores each delivery alone, so one bad row costs only its own delivery a 503
 * (docs/webhooks.md, "Store batches").
 */
let batches: Batches<VerifiedDelivery, IngestResult> | undefined;
function storeBatches(): Batches<VerifiedDelivery, IngestResult> {
  if (batches) return batches;
  const created = new Batches<VerifiedDelivery, IngestResult>({
    maxSize: config().webhookStoreBatchMax,
    runBatch: storeVerifiedEvents,
    runOne: async (d) => (await storeVerifiedEvents([d]))[0],
    observe: (outcome, size, err) => {
      webhookStoreBatchDeliveries.observe({ outcome }, size);
      if (err) logger.warn({ deliveries: size, err: String(err) }, 'webhook store: a batch failed; its deliveries are stored one by one');
    },
  });
  setWebhookStoreWaitingSource(() => created.waitingCount);
  batches = created;
  return created;
}

/**
 * The store as ONE autocommitted statement (a data-modifying CTE) for any number of deliveries:
 * per delivery the duplicate fast path, the log row and, when pending, its outbox row, all or
 * nothing in one round trip. Deliveries travel as one jsonb array so the prepared text is the same
 * for every batch; row ids are made here so job ids are known beforehand. With outbox rows it
 * notifies the workers' relays once (OUTBOX_CHANNEL), so the answer waits for neither Redis nor BullMQ.
 * A bulk insert on the hot path: hand-written SQL, not the WebhookEvent model.
 */
export const STORE_SQL = `with v as (
     select * from jsonb_to_recordset(cast(? as jsonb)) as v(
       id uuid, tenant_id uuid, connector_id uuid, provider text, event text, external_id text,
       money_external_id text, normalized jsonb, raw_body text, booked_check text, money_ids text[], job_id text, payload jsonb)
   ), d as (
     select v.*, ${DUPLICATE_SQL} as dup from v
   ), ev as (
     insert into webhook_events (id, tenant_id, connector_id, provider, event, status, external_id, money_external_id, normalized, raw_body, invoice_id, processed_at)
     select id, tenant_id, connector_id, provider, event, case when dup then 'duplicate' else 'pending' end, external_id, money_external_id, normalized, decode(raw_body, 'base64'),
            case when dup and booked_check = 'money' then ${BOOKED_INVOICE_SQL} end, case when dup then now() end
       from d
     returning id, status
   ), ob as (
     insert into outbox (prefix, queue, job_name, job_id, payload)
     select ?, ?, ?, d.job_id, d.payload from d join ev on ev.id = d.id where ev.status = 'pending'
     returning id
   )
   select ev.id, ev.status, (select count(*) from (select pg_notify(?, ?) from (select 1 from ob limit 1) o) n) as notified from ev`;

async function storeVerifiedEvents(deliveries: VerifiedDelivery[]): Promise<IngestResult[]> {
  const rows = deliveries.map(({ installation, event, rawBody }) => {
    const eventRowId = randomUUID();
    const check = bookedCheck(event);
    return {
      id: eventRowId,
      tenant_id: installation.tenantId,
      connector_id: installation.id,
      provider: installation.provider,
      // Clipped, then storable again: a cut can split a surrogate pair.
      event: storable(event.eventType.slice(0, 200)),
      external_id: storable(event.eventId.slice(0, 500)),
      money_external_id: event.externalId ?? null,
      normalized: event,
      // Travels in the jsonb array as base64 (decoded to bytea in the statement).
      raw_body: rawBody?.toString('base64') ?? null,
      booked_check: check.mode,
      money_ids: check.mode === 'money' ? check.ids : null,
      // The job of shared/jobs/catalog.ts (jobs.processWebhookEvent), written by this statement's own outbox insert.
      job_id: jobs.processWebhookEvent.jobId({ eventRowId, tenantId: installation.tenantId }),
      payload: { eventRowId, tenantId: installation.tenantId },
    };
  });
  const prefix = config().redisPrefix;
  // Prepared (planned once per connection) and compiled once: the text never changes.
  const stored = await runCompiledSql<{ id: string; status: 'pending' | 'duplicate' }>(db(), STORE_SQL, [
    JSON.stringify(rows),
    prefix,
    jobs.processWebhookEvent.queue,
    jobs.processWebhookEvent.name,
    OUTBOX_CHANNEL,
    prefix,
  ]);
  const statusById = new Map(stored.map((r) => [r.id, r.status]));
  return deliveries.map((d, i) => {
    const status = statusById.get(rows[i].id);
    if (!status) throw new Error(`webhook store: row ${rows[i].id} is missing from the statement's result`);
    if (status === 'duplicate') recordWebhookOutcome(d.installation.provider, 'duplicate');
    return { eventRowId: rows[i].id, status };
  });
}

/**
 * Fast path, not the guarantee: every money movement of the event (Mollie's related ones too)
 * already has its invoice ('money', with their external ids), or a non-booking event was processed
 * before ('event'); 'none' when a movement has no external id. Races past this check are caught
 * by the job under its lock and the unique index.
 */
function bookedCheck(event: NormalizedEvent): { mode: 'money'; ids: string[] } | { mode: 'event' } | { mode: 'none' } {
  const movements = [...(event.related ?? []), event].filter((e) => e.kind === 'payment' || e.kind === 'refund');
  if (event.kind === 'payment' || event.kind === 'refund') {
    const ids = movements.map((e) => e.externalId).filter((x): x is string => !!x);
    if (ids.length !== movements.length) return { mode: 'none' };
    return { mode: 'money', ids: [...new Set(ids)] };
  }
  if (movements.length) return { mode: 'none' };
  return { mode: 'event' };
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
  rawBody: Buffer | null = null,
): Promise<string> {
  recordWebhookOutcome(installation.provider, status);
  const row = await WebhookEvent.query(db())
    .insert({
      tenantId: installation.tenantId,
      connectorId: installation.id,
      provider: installation.provider,
      // Payload text (ids, the parser's message) may carry U+0000, which no text column holds.
      event: storable(identity.eventType?.slice(0, 200)) ?? null,
      externalId: storable(identity.eventId?.slice(0, 500)) ?? null,
      status,
      error: storable(error.slice(0, 1000)),
      rawBody,
      processedAt: db().fn.now(),
    })
    .returning('id');
  return row.id;
}
