import { Worker, UnrecoverableError, type Job } from 'bullmq';
import { fileURLToPath } from 'node:url';
import { config, type Config } from '../shared/config';
import { createRedis } from '../shared/redis';
import { QUEUES, enqueue, getQueue, workerLockOptions, type QueueName } from '../shared/queues';
import { db } from '../shared/db';
import { hasRecentExchangeRates } from '../shared/queries/exchangeRates';
import { todayVienna } from '../shared/domain/dates';
import { logger } from '../shared/logger';
import { jobLogContext, runWithLogContext } from '../shared/logContext';
import { registry } from './registry';
import type { QueueHandlers } from './types';
import { handlerFor } from './dispatch';
import { jobs } from '../shared/jobs/catalog';
import { jobDuration } from '../shared/metrics';
import { startOutboxRelay } from './outboxRelay';
import { startRecoveryLoop } from './recoveryLoop';
import { retryDelayMs, WEBHOOK_BACKOFF_TYPE } from '../shared/domain/outboundWebhooks';
import { nowMs } from '../shared/clock';

export interface RunningWorkers {
  workers: Worker[];
  close: () => Promise<void>;
}

/** Queues whose CPU-heavy jobs run in sandboxed child processes (file → processor). */
export const SANDBOXED: Partial<Record<QueueName, string>> = {
  documents: sandboxFile('documents'),
  email: sandboxFile('email'),
  reports: sandboxFile('reports'),
};

/**
 * Beside this module: the TypeScript source under tsx, or the bundled `.mjs` entry when the
 * process runs from scripts/serve.mjs's build (whose modules all sit in one directory).
 */
function sandboxFile(name: string): string {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.mjs';
  return fileURLToPath(new URL(`./sandbox/${name}${ext}`, import.meta.url));
}

export function concurrencyFor(cfg: Config, queue: QueueName): number {
  return cfg.workerConcurrency[queue] ?? cfg.workerConcurrency.default ?? 5;
}

function dispatcher(queue: QueueName, handlers: QueueHandlers) {
  // Every job, the recurring maintenance ones (relay-outbox too) included, runs in its log
  // context: whatever it logs, in shared/ as well, carries its id.
  return (job: Job) => runWithLogContext(jobLogContext(job), () => dispatch(queue, handlers, job));
}

async function dispatch(queue: QueueName, handlers: QueueHandlers, job: Job) {
  // A payload its catalog schema refuses throws UnrecoverableError here, before the handler runs.
  const handler = handlerFor(queue, handlers, job);
  // A job nobody can run will never succeed: fail it for good instead of retrying.
  if (!handler) throw new UnrecoverableError(`No handler for job "${job.name}" on queue "${queue}"`);
  const started = Date.now();
  // A failure is logged once, by the Worker's 'failed' listener (startWorkers): it knows whether
  // BullMQ retries the job, and it sees sandboxed jobs too.
  const result = await handler(job);
  // The outbox relay runs every 10 s per worker: keep it out of the info log.
  logger[job.name === jobs.relayOutbox.name ? 'debug' : 'info']({ ms: Date.now() - started }, 'job completed');
  return result;
}

/**
 * The delays of jobs whose catalog entry names a backoff type of ours: outbound webhook
 * deliveries back off exponentially with jitter until their 3-day window ends (retryDelayMs,
 * measured from the job's creation on the service clock).
 */
export function customBackoff(cfg: Config) {
  return (attemptsMade: number, type?: string, _err?: Error, job?: { timestamp: number }): number => {
    if (type === WEBHOOK_BACKOFF_TYPE) return retryDelayMs(attemptsMade, nowMs() - (job?.timestamp ?? nowMs()), cfg.outboundWebhooks.retryBaseMs);
    throw new Error(`Unknown backoff type ${String(type)}`);
  };
}

/**
 * How a failed attempt is logged (docs/operations.md): `warn` "job attempt failed" when BullMQ
 * retries the job, `error` "job failed" for the final failure (attempts used up, or an
 * UnrecoverableError). BullMQ emits 'failed' after moving the job: a final failure has its
 * finishedOn set, a retried attempt has not.
 */
export function logJobFailure(queue: QueueName, job: Job | undefined, err: Error): void {
  const fields = { queue, jobId: job?.id, job: job?.name, attempt: job?.attemptsMade, err: err.message };
  const ms = job?.processedOn ? Date.now() - job.processedOn : undefined;
  if (job && !job.finishedOn) {
    logger.warn({ ...fields, attempts: job.opts.attempts, ms, retryInMs: job.delay || 0 }, 'job attempt failed');
  } else {
    logger.error({ ...fields, attempts: job?.attemptsMade, ms }, 'job failed');
  }
}

/**
 * Start one BullMQ Worker per queue (or the given subset), and the process's outbox relay
 * (workers/outboxRelay.ts) unless `relay: false`. Many worker processes may run against one
 * Redis: BullMQ's locks make sure each job is processed by one of them at a time.
 */
export async function startWorkers(
  opts: { queues?: QueueName[]; cfg?: Config; schedule?: boolean; sandbox?: boolean; relay?: boolean } = {},
): Promise<RunningWorkers> {
  const cfg = opts.cfg ?? config();
  const names = opts.queues ?? (Object.keys(registry) as QueueName[]);
  const workers: Worker[] = [];
  for (const queue of names) {
    const handlers: QueueHandlers | undefined = (registry as Partial<Record<QueueName, QueueHandlers>>)[queue];
    if (!handlers) continue;
    const sandboxFile = opts.sandbox === false ? undefined : SANDBOXED[queue];
    const w = new Worker(queue, sandboxFile ?? dispatcher(queue, handlers), {
      // Sandboxed children are plain Node processes: a TypeScript processor (under tsx) loads
      // through tsx as we do; the bundled one (scripts/serve.mjs) needs no loader, whose hooks
      // would cost every child memory and every dynamic import() a round trip to tsx's thread.
      // Their stdout/stderr are this process's own file descriptors (stdio: 'inherit'): BullMQ's
      // default pipes each child's output through our process.stdout/stderr, four listeners per
      // child on each, which with more than 10 children (the sandboxed queues' concurrency) raised
      // a MaxListenersExceededWarning and copied every log line through this event loop.
      ...(sandboxFile ? { workerForkOptions: { execArgv: sandboxFile.endsWith('.ts') ? ['--import', 'tsx'] : [], stdio: 'inherit' as const } } : {}),
      connection: createRedis('worker'),
      prefix: cfg.redisPrefix,
      concurrency: concurrencyFor(cfg, queue),
      // A job whose worker died (SIGKILL, OOM) or froze is picked up again after the lock expires;
      // renewal and stalled checks sized in shared/queues.ts (workerLockOptions).
      ...workerLockOptions(cfg),
      // Backoff types of our own (BullMQ's built-in fixed/exponential never reach this).
      settings: { backoffStrategy: customBackoff(cfg) },
    });
    // Durations from BullMQ's own timestamps, so sandboxed jobs are measured the same way.
    const observe = (job: Job | undefined, outcome: string) => {
      if (job?.processedOn && job.finishedOn) jobDuration.observe({ queue, name: job.name, outcome }, (job.finishedOn - job.processedOn) / 1000);
    };
    w.on('completed', (job) => observe(job, 'completed'));
    w.on('failed', (job, err) => {
      observe(job, 'failed');
      logJobFailure(queue, job, err);
    });
    w.on('error', (err) => logger.error({ queue, err: err.message }, 'worker error'));
    workers.push(w);
  }
  if (opts.schedule !== false) await scheduleRecurringJobs();
  const relay = opts.relay === false ? null : startOutboxRelay(cfg);
  // Recurring jobs re-declared and lost jobs queued again on a timer that Redis cannot lose (workers/recoveryLoop.ts).
  const recovery = cfg.recovery.intervalMs ? startRecoveryLoop(cfg, { schedule: opts.schedule === false ? undefined : scheduleRecurringJobs }) : null;
  return {
    workers,
    // close() waits for active jobs to finish; new jobs are not taken meanwhile.
    close: async () => {
      await recovery?.close();
      await relay?.close();
      await Promise.allSettled(workers.map((w) => w.close()));
    },
  };
}

/** Recurring jobs, declared idempotently (upsert), so any number of worker processes may call it. */
export async function scheduleRecurringJobs(): Promise<void> {
  const maintenance = getQueue(QUEUES.maintenance);
  // Scheduler ids are stored in Redis: keep them. Job names from the catalog; data {} (all tenants).
  await maintenance.upsertJobScheduler(
    'purge-deleted-customers-daily',
    { pattern: '0 3 * * *', tz: 'Europe/Vienna' },
    {
      name: jobs.purgeDeletedCustomers.name,
      data: {},
    },
  );
  await maintenance.upsertJobScheduler('relay-outbox', { every: 10_000 }, { name: jobs.relayOutbox.name, data: {} });
  await maintenance.upsertJobScheduler('purge-idempotency-keys-hourly', { pattern: '17 * * * *' }, { name: jobs.purgeIdempotencyKeys.name, data: {} });
  // Webhook rows whose job was lost or died outside its failure path (shared/webhooks/sweepStuckEvents.ts).
  await maintenance.upsertJobScheduler('sweep-stuck-webhook-events', { every: 5 * 60_000 }, { name: jobs.sweepStuckWebhookEvents.name, data: {} });
  await maintenance.upsertJobScheduler(
    'purge-unknown-login-attempts-hourly',
    { pattern: '23 * * * *' },
    { name: jobs.purgeUnknownLoginAttempts.name, data: {} },
  );
  await maintenance.upsertJobScheduler(
    'purge-sent-outbox-daily',
    { pattern: '30 3 * * *', tz: 'Europe/Vienna' },
    { name: jobs.purgeSentOutbox.name, data: {} },
  );
  await maintenance.upsertJobScheduler(
    'purge-webhook-events-daily',
    { pattern: '45 3 * * *', tz: 'Europe/Vienna' },
    { name: jobs.purgeWebhookEvents.name, data: {} },
  );
  // Dunning: one fan-out a day, one run per tenant and day (workers/jobs/maintenance/dunning.ts).
  await maintenance.upsertJobScheduler('dunning-daily', { pattern: '0 7 * * *', tz: 'Europe/Vienna' }, { name: jobs.dunningDaily.name, data: {} });
  // Recurring invoices (docs/recurring-invoices.md): early, so an invoice dated today is made today.
  await maintenance.upsertJobScheduler(
    'run-recurring-invoices-daily',
    { pattern: '0 6 * * *', tz: 'Europe/Vienna' },
    { name: jobs.runRecurringInvoices.name, data: {} },
  );
  await scheduleEcbRates();
}

/**
 * The ECB publishes its rates around 16:00 CET on TARGET days: fetched at 16:30 Berlin time on
 * weekdays, and at once when no recent rate is stored. ECB_RATES_URL empty turns both off.
 */
async function scheduleEcbRates(): Promise<void> {
  const maintenance = getQueue(QUEUES.maintenance);
  if (!config().ecb.ratesUrl) {
    await maintenance.removeJobScheduler('fetch-ecb-rates-daily');
    return;
  }
  await maintenance.upsertJobScheduler('fetch-ecb-rates-daily', { pattern: '30 16 * * 1-5', tz: 'Europe/Berlin' }, { name: jobs.fetchEcbRates.name, data: {} });
  try {
    if (!(await hasRecentExchangeRates(db(), todayVienna()))) await enqueue(jobs.fetchEcbRates, {});
  } catch (err) {
    // A database not reachable yet must not keep the worker from starting: the daily run fetches then.
    logger.warn({ err: String(err) }, 'ECB rates: the start-up fetch could not be queued; the daily run fetches them');
  }
}
