import type { Knex } from 'knex';
import { db } from './db';
import { config } from './config';
import { logger } from './logger';
import { recoveryLockKey, tryLockKey } from './locks';
import { relayOutbox } from './outbox';
import { getQueue, type QueueName } from './queues';
import { producerRedis, redisReady } from './redis';
import { sweepStuckWebhookEvents } from './webhooks/sweepStuckEvents';
import { stillIn } from './queries/stillIn';
import { outcomeUnknownMessage } from './commands/submitVatReturn';
import { jobs } from './jobs/catalog';
import { addOptions, type KeyedJobDefinition } from './jobs/define';

/**
 * Recovery of jobs Redis lost: PostgreSQL rows still "to do" whose job is missing are queued again
 * under their business-key id; what cannot be repeated (an e-mail `sending`, a live U30
 * `submitted`) is marked outcome unknown instead. One run at a time per deployment (advisory lock,
 * not waited for). States, the second look and the bound: docs/resilience.md, "Redis loses its data".
 */
export interface RecoveryOptions {
  /** Pending at least this long before its job is checked. Default: config().recovery.staleAfterMs. */
  staleAfterMs?: number;
  /** Rows per kind and run; the next run takes the rest. */
  limit?: number;
  /** E-mails and U30: how long a job must have been seen missing before it is queued again. Default: half RECOVERY_INTERVAL_MS. */
  confirmAfterMs?: number;
}

export interface RequeueCounts {
  /** Job missing from Redis: added again under its business key. */
  requeued: number;
  /** Job failed or completed while its row stayed unfinished: retried with fresh attempts. */
  retried: number;
  /** Job waiting, delayed or active: left alone. */
  inFlight: number;
  /** Job missing, first seen so: queued again by a later run if it is still missing then. */
  missing: number;
}

export interface RecoveryResult {
  /** Outbox rows handed to Redis. */
  relayed: number;
  webhookEvents: RequeueCounts & { failed: number };
  deliveries: RequeueCounts;
  /** Outbound webhook deliveries still pending (docs/outbound-webhooks.md): their job is queued again; a retry waiting its turn is in flight. */
  webhookDeliveries: RequeueCounts;
  /** outcomeUnknown: live submissions left `submitted` by a lost job, flagged for an admin instead of uploaded again. */
  submissions: RequeueCounts & { outcomeUnknown: number };
}

const counts = (): RequeueCounts => ({ requeued: 0, retried: 0, inFlight: 0, missing: 0 });

/**
 * Jobs (queue:jobId) an earlier run of this process found missing, and when. A process that takes
 * over the lock starts without them: its first run only notes what is missing, one interval more.
 */
const missingSince = new Map<string, number>();

/**
 * Run fn while holding this deployment's recovery lock (or, for a sweep narrowed to a tenant, that
 * tenant's); null (fn not run) when another process holds it. The lock's transaction only holds the
 * lock: fn's statements run on other connections. Overlapping sweeps would do no harm (job ids are
 * business keys), only double work.
 */
export async function withRecoveryLock<T>(fn: () => Promise<T>, tenantId?: string): Promise<T | null> {
  return db().transaction(async (trx: Knex.Transaction) => {
    if (!(await tryLockKey(trx, recoveryLockKey(config().redisPrefix, tenantId)))) return null;
    return fn();
  });
}

/** One recovery run under the lock (null: another process is running one, or Redis is not ready). */
export async function recoverLostJobs(opts: RecoveryOptions = {}): Promise<RecoveryResult | null> {
  // BullMQ's calls wait for a connection indefinitely: without Redis there is nothing to queue into.
  if (!(await redisReady(producerRedis()))) return null;
  const result = await withRecoveryLock(() => recoverLostJobsUnlocked(opts));
  if (result) {
    const { relayed, webhookEvents: w, deliveries: d, webhookDeliveries: o, submissions: s } = result;
    const acted = relayed + w.requeued + w.retried + w.failed + d.requeued + d.retried + o.requeued + o.retried + s.requeued + s.retried + s.outcomeUnknown;
    if (acted) logger.info(result, 'recovery: lost or stuck jobs queued again');
  }
  return result;
}

async function recoverLostJobsUnlocked(opts: RecoveryOptions): Promise<RecoveryResult> {
  const staleAfterMs = opts.staleAfterMs ?? config().recovery.staleAfterMs;
  const limit = opts.limit ?? 500;
  const confirm = missingConfirmation(opts.confirmAfterMs ?? config().recovery.intervalMs / 2);
  let relayed = 0;
  for (;;) {
    const sent = await relayOutbox({ limit: 200 });
    relayed += sent;
    if (sent < 200) break;
  }
  const { requeued, retried, inFlight, failed } = await sweepStuckWebhookEvents({ staleAfterMinutes: staleAfterMs / 60_000, limit });
  const result: RecoveryResult = {
    relayed,
    webhookEvents: { requeued, retried, inFlight, failed, missing: 0 },
    deliveries: await recoverDeliveries(staleAfterMs, limit, confirm),
    webhookDeliveries: await recoverWebhookDeliveries(staleAfterMs, limit, confirm),
    submissions: await recoverSubmissions(staleAfterMs, limit, confirm),
  };
  confirm.forgetUnseen();
  return result;
}

type Confirmation = ReturnType<typeof missingConfirmation>;

/** Whether a missing job has been missing for confirmAfterMs (by this process's earlier runs). */
function missingConfirmation(confirmAfterMs: number) {
  const now = Date.now();
  const seen = new Set<string>();
  return {
    confirmed(key: string): boolean {
      seen.add(key);
      const since = missingSince.get(key);
      if (since === undefined) missingSince.set(key, now);
      return since !== undefined && now - since >= confirmAfterMs;
    },
    done(key: string) {
      missingSince.delete(key);
    },
    /** A job not missing this run (its row finished, or it is back): forget it. */
    forgetUnseen() {
      for (const key of missingSince.keys()) if (!seen.has(key)) missingSince.delete(key);
    },
  };
}

type JobState = 'missing' | 'finished' | 'inFlight';

/** Where a job is: gone from Redis, given up by BullMQ (failed, or completed), or still to run. */
async function jobState(queue: QueueName, jobId: string): Promise<{ state: JobState; retry?: () => Promise<void> }> {
  const job = await getQueue(queue).getJob(jobId);
  const state = job ? await job.getState() : 'unknown';
  if (!job || state === 'unknown') return { state: 'missing' };
  if (state === 'failed' || state === 'completed') {
    // Fresh attempts: the jobs treat their last attempt as final.
    return { state: 'finished', retry: () => job.retry(state, { resetAttemptsMade: true, resetAttemptsStarted: true }) };
  }
  return { state: 'inFlight' };
}

/**
 * Queue a row's job again if Redis lost it (or retry it if BullMQ gave it up); never a second copy.
 * `stillOpen` reads the row again once its job is seen gone or finished (queries/stillIn.ts).
 */
async function requeue<P extends object>(
  job: KeyedJobDefinition<P, QueueName>,
  payload: P,
  c: RequeueCounts,
  confirm: Confirmation,
  stillOpen: () => Promise<boolean>,
): Promise<void> {
  const { queue } = job;
  const jobId = job.jobId(payload);
  try {
    const { state, retry } = await jobState(queue, jobId);
    const key = `${queue}:${jobId}`;
    if (state !== 'inFlight' && !(await stillOpen())) {
      confirm.done(key);
      return;
    }
    if (state === 'missing') {
      if (!confirm.confirmed(key)) {
        c.missing++;
        return;
      }
      await getQueue(queue).add(job.name, payload, addOptions(job, payload));
      confirm.done(key);
      c.requeued++;
    } else if (retry) {
      await retry();
      c.retried++;
    } else c.inFlight++;
  } catch (err) {
    // A worker moved the job meanwhile; the next run looks again. (Not `jobId`: that key is the log context's.)
    logger.warn({ queue, lostJobId: jobId, err: (err as Error).message }, 'recovery: could not re-run a job');
  }
}

/** Rows in one of `statuses`, unchanged for staleAfterMs (by the database's clock), oldest first. */
const stale = (table: string, statuses: string[], staleAfterMs: number, limit: number) =>
  db()(table)
    .whereIn('status', statuses)
    .where('updatedAt', '<', db().raw('now() - make_interval(secs => ?)', [staleAfterMs / 1000]))
    .orderBy('updatedAt')
    .limit(limit);

async function recoverDeliveries(staleAfterMs: number, limit: number, confirm: Confirmation): Promise<RequeueCounts> {
  const c = counts();
  const rows: { id: string; tenantId: string }[] = await stale('deliveries', ['queued', 'sending'], staleAfterMs, limit).select('id', 'tenantId');
  // A `sending` row's job finds it so and marks it failed, outcome unknown: it never sends twice.
  for (const row of rows)
    await requeue(jobs.sendInvoiceEmail, { deliveryId: row.id, tenantId: row.tenantId }, c, confirm, stillIn('deliveries', row, ['queued', 'sending']));
  return c;
}

/** Sending twice is allowed here (at least once; receivers deduplicate by the event id), so a lost job is simply queued again. */
async function recoverWebhookDeliveries(staleAfterMs: number, limit: number, confirm: Confirmation): Promise<RequeueCounts> {
  const c = counts();
  const rows: { id: string; tenantId: string }[] = await stale('webhookDeliveries', ['pending'], staleAfterMs, limit).select('id', 'tenantId');
  for (const row of rows)
    await requeue(jobs.deliverWebhook, { deliveryId: row.id, tenantId: row.tenantId }, c, confirm, stillIn('webhookDeliveries', row, ['pending']));
  return c;
}

async function recoverSubmissions(staleAfterMs: number, limit: number, confirm: Confirmation): Promise<RequeueCounts & { outcomeUnknown: number }> {
  const c = { ...counts(), outcomeUnknown: 0 };
  const rows: { id: string; tenantId: string; mode: 'test' | 'live'; status: string }[] = await stale(
    'reportSubmissions',
    ['queued', 'submitted'],
    staleAfterMs,
    limit,
  )
    .where({ outcomeUnknown: false })
    .select('id', 'tenantId', 'mode', 'status');
  for (const row of rows) {
    const payload = { tenantId: row.tenantId, submissionId: row.id };
    const { queue } = jobs.submitU30;
    const jobId = jobs.submitU30.jobId(payload);
    if (row.status === 'submitted' && row.mode === 'live') {
      // Claimed for upload by a run whose job is gone: the file may be filed. Not uploaded again.
      try {
        const { state } = await jobState(queue, jobId);
        if (state === 'inFlight') {
          c.inFlight++;
          continue;
        }
        if (state === 'missing' && !confirm.confirmed(`${queue}:${jobId}`)) {
          c.missing++;
          continue;
        }
        confirm.done(`${queue}:${jobId}`);
        // The status predicate: an upload finishing right now (accepted) or an admin's resolution wins.
        const flagged = await db()('reportSubmissions')
          .where({ id: row.id, tenantId: row.tenantId, status: 'submitted', outcomeUnknown: false })
          .update({ outcomeUnknown: true, error: outcomeUnknownMessage(row.id), updatedAt: db().fn.now() });
        if (flagged) {
          c.outcomeUnknown++;
          logger.warn({ submissionId: row.id }, 'recovery: live U30 upload interrupted with its job lost; outcome unknown, not uploading again');
        }
      } catch (err) {
        logger.warn({ submissionId: row.id, err: (err as Error).message }, 'recovery: could not check a submission');
      }
      continue;
    }
    await requeue(jobs.submitU30, payload, c, confirm, stillIn('reportSubmissions', row, ['queued', 'submitted']));
  }
  return c;
}
