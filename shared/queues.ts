import { Queue, QueueEvents, type JobsOptions } from 'bullmq';
import { config } from './config';
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
 * Add a job now (outside any transaction). If Redis is unreachable the caller gets 503 with
 * Retry-After instead of a hang or a 500.
 */
export async function enqueue<T extends object>(queue: QueueName, name: string, data: T, opts: JobsOptions = {}) {
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

export class JobWaitTimeout extends Error {}

/**
 * Add a job (or join the existing one with the same id) and wait for its result, bounded. The
 * QueueEvents connection is made ready first: a fresh connection reads the event stream from
 * "now" and would miss a completion that happened while it was still connecting. BullMQ's
 * waitUntilFinished also checks the job's state after subscribing, so an already finished job
 * resolves at once. Throws JobWaitTimeout past waitMs; a failed job rejects with its reason.
 */
export async function runAndWait<T>(queue: QueueName, name: string, data: object, opts: JobsOptions & { jobId: string }, waitMs: number) {
  const events = getQueueEvents(queue);
  try {
    await withTimeout(events.waitUntilReady(), 2000, 'not ready');
  } catch {
    throw serviceUnavailable('The job queue is temporarily unavailable; please retry shortly', 5);
  }
  const job = await enqueue(queue, name, data, opts);
  try {
    return { job, result: (await job.waitUntilFinished(events, waitMs)) as T };
  } catch (err) {
    if (/timed out|Job wait/i.test((err as Error).message)) throw new JobWaitTimeout((err as Error).message);
    throw Object.assign(err as Error, { job });
  }
}
