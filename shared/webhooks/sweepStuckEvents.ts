import { db } from '../db';
import { logger } from '../logger';
import { getQueue } from '../queues';
import { addOptions } from '../jobs/define';
import { jobs } from '../jobs/catalog';
import { producerRedis, redisReady } from '../redis';
import { systemActor } from '../actor';
import { failStoredEvent } from '../commands/webhooks/failStoredEvent';
import { runInTransaction } from '../outbox';
import { stillIn } from '../queries/stillIn';

export interface SweepOptions {
  /** Only this tenant (tests, on-demand runs); all tenants otherwise. */
  tenantId?: string;
  /** A row pending longer than this gets its job checked and, if the job is gone or dead, re-run. Default 15 min. */
  staleAfterMinutes?: number;
  /** A row pending longer than this is given up: failed, with the reason. Default 24 h. */
  maxAgeHours?: number;
  /** Rows per run; the schedule comes back for the rest. Default 500. */
  limit?: number;
  now?: Date;
}

export interface SweepResult {
  /** Job missing from Redis (lost, or removed): added again under its business key. */
  requeued: number;
  /** Job failed or completed in BullMQ while the row stayed pending: moved back to waiting. */
  retried: number;
  /** Job waiting, delayed (backoff) or active: left alone. */
  inFlight: number;
  /** Pending past maxAgeHours: marked failed. */
  failed: number;
}

export const SWEEP_DEFAULTS = { staleAfterMinutes: 15, maxAgeHours: 24, limit: 500 } as const;

/**
 * Rows pending for ever because their job never reached its failure path (Redis lost it, or BullMQ
 * failed it after maxStalledCount worker deaths). Past staleAfterMinutes: a missing job is added
 * again, a failed or completed one retried (BullMQ ignores an add whose id still exists), one in
 * flight left alone; past maxAgeHours the row is failed. Idempotent; reads across tenants, writes
 * by row id and tenant. Table of cases: docs/webhooks.md, "Rows a job never finished".
 */
export async function sweepStuckWebhookEvents(opts: SweepOptions = {}): Promise<SweepResult> {
  const now = opts.now ?? new Date();
  const staleAfterMs = (opts.staleAfterMinutes ?? SWEEP_DEFAULTS.staleAfterMinutes) * 60_000;
  const maxAgeMs = (opts.maxAgeHours ?? SWEEP_DEFAULTS.maxAgeHours) * 3600_000;
  const limit = opts.limit ?? SWEEP_DEFAULTS.limit;
  const result: SweepResult = { requeued: 0, retried: 0, inFlight: 0, failed: 0 };
  const pending = () =>
    db()('webhookEvents')
      .where({ status: 'pending' })
      .modify((q) => (opts.tenantId ? q.where({ tenantId: opts.tenantId }) : q));

  const expired: { id: string; tenantId: string }[] = await pending()
    .where('receivedAt', '<', new Date(now.getTime() - maxAgeMs))
    .orderBy('receivedAt')
    .limit(limit)
    .select('id', 'tenantId');
  const hours = Math.round(maxAgeMs / 360_000) / 10;
  for (const row of expired) {
    const reason = `not processed within ${hours} h (job lost or kept failing); given up by the maintenance sweep`;
    await runInTransaction((trx) => failStoredEvent({ trx, actor: systemActor(row.tenantId) }, { eventRowId: row.id, reason }));
    result.failed++;
  }

  const stale: { id: string; tenantId: string }[] = await pending()
    .where('receivedAt', '<', new Date(now.getTime() - staleAfterMs))
    .orderBy('receivedAt')
    .limit(limit)
    .select('id', 'tenantId');
  if (!stale.length) return result;
  // BullMQ's calls wait for a connection indefinitely: without Redis, leave the rows for the next run.
  if (!(await redisReady(producerRedis()))) {
    logger.warn({ rows: stale.length }, 'webhook sweep: Redis not ready, stale rows left for the next run');
    return result;
  }
  const job = jobs.processWebhookEvent;
  const queue = getQueue(job.queue);
  for (const row of stale) {
    const payload = { eventRowId: row.id, tenantId: row.tenantId };
    const jobId = job.jobId(payload);
    try {
      const existing = await queue.getJob(jobId);
      const state = existing ? await existing.getState() : 'unknown';
      // Read again: its job may have finished since the select (queries/stillIn.ts).
      if (['unknown', 'failed', 'completed'].includes(state) && !(await stillIn('webhookEvents', row, ['pending'])())) continue;
      if (!existing || state === 'unknown') {
        await queue.add(job.name, payload, addOptions(job, payload));
        result.requeued++;
      } else if (state === 'failed' || state === 'completed') {
        // Fresh attempts: processWebhookEvent treats the last attempt as final.
        await existing.retry(state, { resetAttemptsMade: true, resetAttemptsStarted: true });
        result.retried++;
      } else {
        result.inFlight++;
      }
    } catch (err) {
      // Another sweep or a worker moved the job meanwhile; the next run looks again.
      // Not `jobId`: that field is the sweep's own job (the log context); this is the stale one.
      logger.warn({ staleJobId: jobId, err: (err as Error).message }, 'webhook sweep: could not re-run a stale job');
    }
  }
  if (result.requeued || result.retried || result.failed) logger.info(result, 'webhook sweep: stuck events handled');
  return result;
}
