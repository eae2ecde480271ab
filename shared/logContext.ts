import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What a log line is written for: the request it serves (its X-Request-Id) or the job it runs.
 * The logger's mixin (shared/logger.ts) adds these fields to every line, so code anywhere, shared/
 * included, gets them by importing `logger`, without passing ids or child loggers around. The
 * names are those the access log and the job lines always wrote (docs/operations.md, "Logs").
 */
export type LogContext = { requestId: string } | { jobId: string | undefined; queue: string; job: string; attempt: number };

const storage = new AsyncLocalStorage<LogContext>();

/** Run fn, and everything it starts (awaits, timers, callbacks), with ctx on its log lines. */
export function runWithLogContext<T>(ctx: LogContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

/**
 * Run fn with no context: for work started by one caller on behalf of many (a batch of several
 * requests' or jobs' items), whose lines would otherwise carry the id of whoever started it.
 */
export function runWithoutLogContext<T>(fn: () => T): T {
  return storage.exit(fn);
}

/**
 * A BullMQ job's context, in the worker process and in sandboxed children alike (workers/worker.ts,
 * workers/sandbox/). Structural, so shared/ needs no bullmq import for it.
 */
export function jobLogContext(job: { id?: string; queueName: string; name: string; attemptsMade: number }): LogContext {
  return { jobId: job.id, queue: job.queueName, job: job.name, attempt: job.attemptsMade + 1 };
}

export function currentLogContext(): LogContext | undefined {
  return storage.getStore();
}
