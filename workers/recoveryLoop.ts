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
 * Every worker process's recovery loop: a plain timer (RECOVERY_INTERVAL_MS), a run whenever the
 * Redis connection becomes ready again, and one at start — nothing of it lives in Redis. Each run
 * re-declares the recurring jobs if SENTINEL_SCHEDULER is gone, then runs the recovery sweep
 * (shared/recovery.ts; one process at a time). The bound this gives: docs/resilience.md,
 * "Redis loses its data".
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
