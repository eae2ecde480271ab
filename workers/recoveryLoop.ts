import type { Config } from '../shared/config';
import { logger } from '../shared/logger';
import { recoverLostJobs } from '../shared/recovery';
import { producerRedis, redisReady } from '../shared/redis';
import { getQueue, QUEUES } from '../shared/queues';

/**
 * Declared by scheduleRecurringJobs with the others; Redis loses them together (noeviction keeps
 * it from losing some). Re-declaring is left for when it is missing: an upsert removes a scheduled
 * job that is already due but not yet taken and, for a cron pattern, schedules the next occurrence
 * instead, so upserting every interval could postpone a daily purge that waits behind other jobs.
 */
const SENTINEL_SCHEDULER = 'relay-outbox';

/**
 * Every worker process's recovery loop: a plain timer (RECOVERY_INTERVAL_MS, 20 s by default),
 * plus a run whenever the process's Redis connection becomes ready again (a restarted or failed-
 * over Redis may have come back empty), and one at start. Nothing of it lives in Redis, so losing
 * Redis's data cannot lose it — unlike BullMQ's job schedulers, which are Redis keys. Each run:
 *
 * 1. re-declares the recurring jobs (`schedule`: upsertJobScheduler, idempotent) when they are
 *    gone (SENTINEL_SCHEDULER), so a Redis that lost them has them back within one interval;
 * 2. runs the recovery sweep (shared/recovery.ts): outbox rows not yet handed to Redis, and
 *    webhook events, e-mail deliveries and U30 submissions pending for RECOVERY_STALE_AFTER_MS
 *    whose job Redis no longer has are queued again. One process of the deployment at a time
 *    (advisory lock); the others skip their turn.
 *
 * A job Redis lost is thus queued again within RECOVERY_STALE_AFTER_MS + 2 × RECOVERY_INTERVAL_MS
 * (100 s by default: e-mails and U30 submissions wait for a second run that still finds their job
 * missing; webhook events one interval less), however many worker processes run and without any
 * of them restarting.
 */
export interface RecoveryLoop {
  close: () => Promise<void>;
}

export function startRecoveryLoop(cfg: Config, opts: { schedule?: () => Promise<void> } = {}): RecoveryLoop {
  let closed = false;
  let running: Promise<void> | null = null;
  let again = false;

  const pass = async () => {
    if (closed || !(await redisReady(producerRedis()))) return;
    if (opts.schedule) {
      const schedule = opts.schedule;
      await getQueue(QUEUES.maintenance)
        .getJobScheduler(SENTINEL_SCHEDULER)
        .then((present) => (present ? undefined : schedule()))
        .catch((err: unknown) => logger.warn({ err: String(err) }, 'recovery: declaring the recurring jobs failed; the next run retries'));
    }
    if (closed) return;
    await recoverLostJobs().catch((err: unknown) => logger.warn({ err: String(err) }, 'recovery sweep failed; the next run retries'));
  };

  const kick = () => {
    if (closed) return;
    if (running) {
      // A Redis that returned during a run may have lost what this run just checked: go once more.
      again = true;
      return;
    }
    running = pass().finally(() => {
      running = null;
      if (again) {
        again = false;
        kick();
      }
    });
  };

  const timer = setInterval(kick, cfg.recovery.intervalMs);
  timer.unref();
  const onReady = () => kick();
  producerRedis().on('ready', onReady);
  kick();

  return {
    close: async () => {
      closed = true;
      clearInterval(timer);
      producerRedis().off('ready', onReady);
      await running;
    },
  };
}
