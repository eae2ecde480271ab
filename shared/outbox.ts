import type { Knex } from 'knex';
import { db } from './db';
import { getQueue, type QueueName } from './queues';
import { producerRedis, redisReady } from './redis';
import { logger } from './logger';
import { config } from './config';
import { TimeoutError, withTimeout } from './timeout';
import { Batches } from './batches';
import { findJob } from './jobs/catalog';
import type { KeyedJobDefinition } from './jobs/define';

/**
 * Transactional outbox: enqueueAfterCommit() writes the job into the outbox table inside the
 * command's transaction, so a rollback leaves no job and a commit never loses one. After commit
 * runInTransaction() relays the rows; if Redis is down they stay for the periodic relay. Rows of
 * the webhook store are relayed by the workers' listeners instead (OUTBOX_CHANNEL). Job ids are
 * business keys, so a row relayed twice is one job (docs/operations.md, "Outbox relay").
 */
export interface OutboxJob {
  queue: QueueName;
  name: string;
  jobId: string;
  data: Record<string, unknown>;
}

const pendingByTrx = new WeakMap<Knex.Transaction, (OutboxJob & { id: string })[]>();

/**
 * Write a job of the catalog (shared/jobs/catalog.ts) to the outbox: `enqueueAfterCommit(trx,
 * jobs.sendInvoiceEmail, { deliveryId, tenantId })`. Queue, name and job id come from the entry.
 * The row form (queue, name, jobId, data) writes a job outside the catalog: tests only.
 */
export function enqueueAfterCommit<P extends object>(trx: Knex.Transaction, job: KeyedJobDefinition<P, QueueName>, payload: P): Promise<void>;
export function enqueueAfterCommit(trx: Knex.Transaction, job: OutboxJob): Promise<void>;
export async function enqueueAfterCommit(trx: Knex.Transaction, def: OutboxJob | KeyedJobDefinition<object, QueueName>, payload?: object): Promise<void> {
  const job: OutboxJob =
    'schema' in def ? { queue: def.queue, name: def.name, jobId: def.jobId(payload as object), data: { ...(payload as Record<string, unknown>) } } : def;
  const [row] = await trx('outbox')
    .insert({ prefix: config().redisPrefix, queue: job.queue, jobName: job.name, jobId: job.jobId, payload: JSON.stringify(job.data) })
    .returning('id');
  const id = String((row as { id: string | number }).id);
  const list = pendingByTrx.get(trx);
  if (list) list.push({ ...job, id });
}

const commitHooksByTrx = new WeakMap<Knex.Transaction, (() => void)[]>();

/**
 * Run hook once trx has committed (never on rollback): in-process caches a command changed
 * (the webhook token cache) are dropped only when the change is visible to the next reader.
 * Under runInTransaction it runs before the caller gets the result; for any other transaction
 * when its promise settles.
 */
export function onCommit(trx: Knex.Transaction, hook: () => void): void {
  const hooks = commitHooksByTrx.get(trx);
  if (hooks) hooks.push(hook);
  else trx.executionPromise.then(hook, () => {});
}

/** Run fn in a transaction; send the jobs it wrote to the outbox once the transaction committed. */
export async function runInTransaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  const jobs: (OutboxJob & { id: string })[] = [];
  const hooks: (() => void)[] = [];
  const result = await db().transaction(async (trx) => {
    pendingByTrx.set(trx, jobs);
    commitHooksByTrx.set(trx, hooks);
    return fn(trx);
  });
  for (const hook of hooks) hook();
  if (jobs.length) {
    await sendCommitted(jobs).catch((err) => logger.warn({ err: String(err) }, 'sending jobs after commit failed; the periodic relay will retry'));
  }
  return result;
}

/**
 * The fast path after commit: the jobs are in memory, so add them and mark their rows with one
 * UPDATE — no second transaction. A relay running at the same moment may add the same job too;
 * BullMQ ignores an add whose job id exists, so the work still happens once.
 */
async function sendCommitted(jobs: (OutboxJob & { id: string })[]): Promise<void> {
  if (!(await redisReady(producerRedis()))) return;
  await addBatched(jobs);
  await markEnqueued(jobs.map((j) => j.id));
}

/**
 * Add jobs to their queues now: one addBulk per queue (a pipeline: one round trip however many
 * jobs), with their catalog entry's options (the row holds only queue, name, id and payload, so
 * rows written before a change of options are sent with the current ones). Bounded: should Redis
 * drop right now, the caller must not wait for it.
 */
async function addJobs(jobs: OutboxJob[]): Promise<void> {
  const byQueue = new Map<QueueName, OutboxJob[]>();
  for (const j of jobs) {
    const list = byQueue.get(j.queue);
    if (list) list.push(j);
    else byQueue.set(j.queue, [j]);
  }
  await withTimeout(
    Promise.all(
      [...byQueue].map(([queue, js]) =>
        getQueue(queue).addBulk(js.map((j) => ({ name: j.name, data: j.data, opts: { ...findJob(queue, j.name)?.def.options, jobId: j.jobId } }))),
      ),
    ),
    2000,
    'queue add timed out',
  );
}

/**
 * Adds jobs in batches (see groupBatches): the jobs of requests finishing together go to Redis in
 * one addBulk per queue instead of one round trip each. If a batch fails or times out, each of
 * its callers sees the error and leaves its rows to the relay.
 */
const addBatched = groupBatches<OutboxJob>(addJobs);

/**
 * Notification channel for outbox rows written in one statement with their data (the webhook
 * store, shared/webhooks/ingest.ts): the statement calls `pg_notify(OUTBOX_CHANNEL, prefix)`,
 * delivered on commit only, and the workers' relays (workers/outboxRelay.ts) add the jobs in
 * batches. Public, numerous requests thus wait for neither Redis nor BullMQ; the periodic
 * relay-outbox job stays the backstop.
 */
export const OUTBOX_CHANNEL = 'outbox';

/**
 * Marks sent rows with one UPDATE per batch. A failed or lost mark is harmless: the row stays
 * pending, the relay adds the job again, and BullMQ ignores an add whose job id exists (or the
 * job skips a row it already finished).
 */
const markEnqueued = groupBatches<string>(async (ids) => {
  await db()('outbox')
    .whereIn('id', ids)
    .whereNull('enqueuedAt')
    .update({ enqueuedAt: db().fn.now(), attempts: db().raw('attempts + 1') });
});

/**
 * "Group commit" for after-commit work (shared/batches.ts): items of concurrent callers go in one
 * round trip. Each caller's promise settles with its batch; a failed batch fails all of its
 * callers, who leave their rows to the relay.
 */
function groupBatches<T>(run: (batch: T[]) => Promise<void>): (items: T[]) => Promise<void> {
  const batches = new Batches<T, void>({
    // Jobs (or row ids) per round trip: more than concurrent requests ever finish together.
    maxSize: 1000,
    runBatch: async (batch) => {
      await run(batch);
      return batch.map(() => undefined);
    },
  });
  return async (items) => {
    await Promise.all(items.map((item) => batches.run(item)));
  };
}

/**
 * Send pending outbox rows, up to `limit`: one addBulk per queue and one UPDATE. SKIP LOCKED keeps
 * several relays off the same row. A failed batch is retried row by row while Redis is connected,
 * so a row Redis refuses (its error noted) holds back no other; jobs that did reach Redis are
 * deduplicated by their ids.
 */
export async function relayOutbox(opts: { ids?: string[]; limit?: number } = {}): Promise<number> {
  return db().transaction(async (trx) => {
    let q = trx('outbox')
      .where({ prefix: config().redisPrefix })
      .whereNull('enqueuedAt')
      .orderBy('id')
      .limit(opts.limit ?? 200)
      .forUpdate()
      .skipLocked();
    if (opts.ids) q = q.whereIn('id', opts.ids);
    const rows: { id: string; queue: QueueName; jobName: string; jobId: string; payload: Record<string, unknown> }[] = await q;
    // BullMQ's add() waits for a connection indefinitely: with Redis down, leave the rows for
    // the next relay instead of holding their locks (and the caller) until Redis returns.
    if (!rows.length || !(await redisReady(producerRedis()))) return 0;
    const jobOf = (r: (typeof rows)[number]): OutboxJob => ({ queue: r.queue, name: r.jobName, jobId: r.jobId, data: r.payload });
    const markSent = (ids: string[]) =>
      trx('outbox')
        .whereIn('id', ids)
        .update({ enqueuedAt: trx.fn.now(), attempts: trx.raw('attempts + 1') });
    try {
      await addJobs(rows.map(jobOf));
      await markSent(rows.map((r) => r.id));
      return rows.length;
    } catch {
      // Find the row(s) at fault below; each keeps its own error.
    }
    let sent = 0;
    for (const row of rows) {
      if (producerRedis().status !== 'ready') break;
      try {
        await addJobs([jobOf(row)]);
        await markSent([row.id]);
        sent++;
      } catch (err) {
        await trx('outbox')
          .where({ id: row.id })
          .update({ attempts: trx.raw('attempts + 1'), lastError: String((err as Error).message ?? err).slice(0, 500) });
        // No answer at all is Redis's fault, not the row's: waiting 2 s per row would hold the locks for minutes.
        if (err instanceof TimeoutError) break;
      }
    }
    return sent;
  });
}

/** Sent rows are kept this long (to answer "was that job handed to Redis, and when?"), then purged. */
export const OUTBOX_RETENTION_DAYS = 7;

/**
 * Delete this deployment's outbox rows sent more than OUTBOX_RETENTION_DAYS ago, `batch` rows per
 * statement so no delete holds many locks or writes much WAL at once. Rows still pending are never
 * deleted: they are work not yet done (outbox_pending shows them). Without this the table would
 * grow by every job ever sent.
 */
export async function purgeSentOutbox(opts: { batch?: number } = {}): Promise<number> {
  const batch = opts.batch ?? 10_000;
  let purged = 0;
  for (;;) {
    // By id, oldest first: sent rows are old rows, so the primary key finds them without an index
    // on enqueued_at (which every relay's UPDATE would have to maintain).
    const n = await db()('outbox')
      .whereIn(
        'id',
        db()('outbox')
          .select('id')
          .where({ prefix: config().redisPrefix })
          .where('enqueuedAt', '<', db().raw(`now() - make_interval(days => ?)`, [OUTBOX_RETENTION_DAYS]))
          .orderBy('id')
          .limit(batch),
      )
      .delete();
    purged += n;
    if (n < batch) return purged;
  }
}
