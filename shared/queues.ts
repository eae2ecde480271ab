import { Queue, QueueEvents, type Job, type JobsOptions } from 'bullmq';
import { config, type Config } from './config';
import { addOptions, type JobDefinition, type KeyedJobDefinition } from './jobs/define';
import { createRedis, producerRedis, redisReady } from './redis';
import { serviceUnavailable } from './errors';
import { withTimeout } from './timeout';

/**
 * Every queue of the service, declared once. The API produces into them, workers/index.ts runs
 * one BullMQ Worker per queue. Payloads carry ids only — never secrets or personal data.
 */
export const QUEUES = {
  /** Payment-provider webhook pipeline (verify → tenant → supplier → invoice → ledger). */
  webhooks: 'webhooks',
  /** PDF, ZUGFeRD and ebInterface rendering (CPU-heavy, sandboxed). */
  documents: 'documents',
  /** Invoice e-mail delivery over SMTP. */
  email: 'email',
  /** Tax portal (FinanzOnline) submissions. */
  taxPortal: 'tax-portal',
  /** Report files (PDF reports). */
  reports: 'reports',
  /** Outbound webhooks: event deliveries to the tenants' receivers (docs/outbound-webhooks.md). */
  outboundWebhooks: 'outbound-webhooks',
  /** Housekeeping: retention purges, outbox relay, token cleanup. */
  maintenance: 'maintenance',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];
export const ALL_QUEUES: QueueName[] = Object.values(QUEUES);

/** Retries with exponential backoff and jitter, so retries after an outage do not arrive in lockstep. */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 2000, jitter: 0.5 },
  removeOnComplete: { age: 24 * 3600, count: 5000 },
  removeOnFail: { age: 14 * 24 * 3600 },
};

export const QUEUE_JOB_OPTIONS: Partial<Record<QueueName, JobsOptions>> = {
  // Rendering is deterministic: a few retries cover a crashed worker, more would only repeat a bug.
  documents: { ...DEFAULT_JOB_OPTIONS, attempts: 3, removeOnComplete: { age: 3600, count: 1000 } },
  email: { ...DEFAULT_JOB_OPTIONS, attempts: 10 },
  'tax-portal': { ...DEFAULT_JOB_OPTIONS, attempts: 10 },
};

export const jobOptionsFor = (queue: QueueName): JobsOptions => QUEUE_JOB_OPTIONS[queue] ?? DEFAULT_JOB_OPTIONS;

/**
 * How a queue's workers hold their jobs (workers/worker.ts): a live worker keeps its lock under CPU
 * starvation (renewed every sixth of WORKER_LOCK_DURATION_MS), a dead or frozen one is taken over
 * within two stalled checks (every third); maxStalledCount 3 fails a job that keeps killing its
 * worker. The API reads the same numbers. docs/operations.md, "Locks: a job whose worker stops renewing".
 */
export function workerLockOptions(cfg: Config) {
  const lockDuration = cfg.workerLockDurationMs;
  return {
    lockDuration,
    lockRenewTime: Math.max(200, Math.round(lockDuration / 6)),
    stalledInterval: Math.max(300, Math.round(lockDuration / 3)),
    maxStalledCount: 3,
  };
}

/** Longest time from a lapsed lock until a worker may take the job again: two stalled checks. */
export const takeoverMs = (cfg: Config) => 2 * workerLockOptions(cfg).stalledInterval;

const queues = new Map<string, Queue>();

/** Producer-side queue on the shared non-blocking connection. */
export function getQueue(name: QueueName): Queue {
  let q = queues.get(name);
  if (!q) {
    q = new Queue(name, {
      connection: producerRedis(),
      prefix: config().redisPrefix,
      defaultJobOptions: jobOptionsFor(name),
    });
    q.on('error', () => undefined);
    // Every request waiting for its job (runAndWait: job.waitUntilFinished) adds a 'closing'
    // listener to this queue until its job ends; more than Node's default of 10 at once is load,
    // not a leak, and the warning printed a non-JSON line to stderr.
    q.setMaxListeners(1000);
    queues.set(name, q);
  }
  return q;
}

const events = new Map<string, QueueEvents>();
/** QueueEvents for waiting on a job's completion from the API (render-and-wait endpoints). */
export function getQueueEvents(name: QueueName): QueueEvents {
  let e = events.get(name);
  if (!e) {
    e = new QueueEvents(name, { connection: createRedis('worker'), prefix: config().redisPrefix });
    e.on('error', () => undefined);
    events.set(name, e);
  }
  return e;
}

/**
 * Add a job of the catalog (shared/jobs/catalog.ts) now, outside any transaction; queue, name, id
 * and options come from its entry. Redis unreachable → 503 with Retry-After, not a hang or a 500.
 * `opts` and the (queue, name, data) form, which bypasses the catalog, are for tests and tools.
 */
export function enqueue<P extends object>(job: JobDefinition<P, QueueName>, payload: P, opts?: JobsOptions): Promise<Job>;
export function enqueue(queue: QueueName, name: string, data: object, opts?: JobsOptions): Promise<Job>;
export async function enqueue(
  target: QueueName | JobDefinition<object, QueueName>,
  ...args: [payload: object, opts?: JobsOptions] | [name: string, data: object, opts?: JobsOptions]
): Promise<Job> {
  const [queue, name, data, opts] =
    typeof target === 'string'
      ? [target, args[0] as string, args[1] as object, (args[2] as JobsOptions | undefined) ?? {}]
      : [target.queue, target.name, args[0] as object, { ...addOptions(target, args[0] as object), ...(args[1] as JobsOptions | undefined) }];
  const unavailable = () => serviceUnavailable('The job queue is temporarily unavailable; please retry shortly', 5);
  // Fail fast: BullMQ's add() would otherwise wait for a connection until Redis returns.
  if (!(await redisReady(producerRedis()))) throw unavailable();
  try {
    return await getQueue(queue).add(name, data, opts);
  } catch {
    throw unavailable();
  }
}

export async function closeQueues(): Promise<void> {
  await Promise.allSettled([...queues.values()].map((q) => q.close()));
  await Promise.allSettled([...events.values()].map((e) => e.close()));
  queues.clear();
  events.clear();
}

/** The wait for a job ended before the job did; `retryAfterSeconds` from the job's state. */
export class JobWaitTimeout extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Where a job stands for a client that waited for it in vain: `lapsed` when it is active but no
 * worker holds its lock any more (the worker died, froze or was starved of CPU; a stalled check
 * hands it to another worker within takeoverMs), `delayed` with the time its retry is due.
 */
async function jobStanding(queue: QueueName, jobId: string): Promise<{ state: string; lapsed: boolean; dueInMs: number }> {
  const q = getQueue(queue);
  const job = await q.getJob(jobId);
  if (!job) return { state: 'missing', lapsed: false, dueInMs: 0 };
  const state = await job.getState();
  const lapsed = state === 'active' && (await producerRedis().exists(`${q.toKey(jobId)}:lock`)) === 0;
  // A retry is due `delay` after its failed attempt, which started at processedOn: a lower bound.
  const dueInMs = state === 'delayed' ? Math.max(0, (job.processedOn ?? job.timestamp) + (job.delay ?? 0) - Date.now()) : 0;
  return { state, lapsed, dueInMs };
}

/**
 * Retry-After for a client whose wait ended before its job: a retry joins the same job and waits
 * for it again, so "now" (1 s) is honest while the job waits or runs; a job whose lock lapsed
 * cannot finish before a stalled check hands it over (takeoverMs), and a delayed retry not
 * before it is due.
 */
async function retryAfterFor(queue: QueueName, jobId: string, cfg: Config): Promise<number> {
  try {
    const { lapsed, dueInMs } = await jobStanding(queue, jobId);
    const ms = lapsed ? takeoverMs(cfg) : dueInMs;
    return Math.min(120, Math.max(1, Math.ceil(ms / 1000)));
  } catch {
    return 5;
  }
}

/**
 * Add a catalog job (or join the one with the same id) and wait for its result, bounded. The
 * QueueEvents connection is made ready first, or a completion during connecting would be missed.
 * `settled` (polled) ends the wait once the job's effect exists (a worker that lost its lock cannot
 * complete it); a lapsed lock gets one takeover, then JobWaitTimeout (docs/operations.md, "Locks").
 */
export async function runAndWait<T, P extends object = object>(
  def: KeyedJobDefinition<P, QueueName>,
  payload: P,
  waitMs: number,
  wait: { settled?: () => Promise<boolean>; pollMs?: number; cfg?: Config } = {},
): Promise<{ job: Job; result?: T; settled?: boolean }> {
  const cfg = wait.cfg ?? config();
  const queue = def.queue;
  const jobId = def.jobId(payload);
  const events = getQueueEvents(queue);
  try {
    await withTimeout(events.waitUntilReady(), 2000, 'not ready');
  } catch {
    throw serviceUnavailable('The job queue is temporarily unavailable; please retry shortly', 5);
  }
  const job = await enqueue(def, payload);
  let done = false;
  const timers: NodeJS.Timeout[] = [];
  // BullMQ's own bound only keeps its listeners from outliving a request that gave up.
  const finished = job.waitUntilFinished(events, 2 * waitMs + takeoverMs(cfg) + 5_000).then(
    (result) => ({ result: result as T }),
    (err: Error) => ({ err }),
  );
  const poll = async (): Promise<{ settled: true } | null> => {
    if (!wait.settled) return null;
    while (!done) {
      await sleep(wait.pollMs ?? 500);
      if (done) return null;
      if (await wait.settled().catch(() => false)) return { settled: true };
    }
    return null;
  };
  const deadline = (ms: number) => new Promise<{ timedOut: true }>((resolve) => timers.push(setTimeout(() => resolve({ timedOut: true }), ms)));
  try {
    const polled = poll().then((r) => r ?? new Promise<never>(() => undefined));
    let outcome = await Promise.race([finished, polled, deadline(waitMs)]);
    if ('timedOut' in outcome && (await jobStanding(queue, jobId).catch(() => null))?.lapsed) {
      outcome = await Promise.race([finished, polled, deadline(takeoverMs(cfg) + waitMs)]);
    }
    if ('timedOut' in outcome) throw new JobWaitTimeout(`job ${jobId} not finished within the wait`, await retryAfterFor(queue, jobId, cfg));
    if ('settled' in outcome) return { job, settled: true };
    if ('err' in outcome) {
      if (/Job wait .* timed out/.test(outcome.err.message)) throw new JobWaitTimeout(outcome.err.message, await retryAfterFor(queue, jobId, cfg));
      throw Object.assign(outcome.err, { job });
    }
    return { job, result: outcome.result };
  } finally {
    done = true;
    for (const t of timers) clearTimeout(t);
  }
}
