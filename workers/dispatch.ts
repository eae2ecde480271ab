import { UnrecoverableError } from 'bullmq';
import { findJob } from '../shared/jobs/catalog';
import { payloadError } from '../shared/jobs/define';
import type { JobHandler, QueueHandlers } from './types';

/**
 * The handler of a job of `queue` (in the worker's process or a sandboxed child), by its name:
 * undefined when the catalog has no such job on the queue or the queue's handlers do not run it
 * (the caller fails it as an unknown job). A payload its entry's schema refuses can never succeed:
 * UnrecoverableError with ajv's message, before the handler runs, so no attempt is spent on retries.
 */
export function handlerFor(queue: string, handlers: object, job: { name: string; data: unknown }): JobHandler<unknown> | undefined {
  const entry = findJob(queue, job.name);
  const handler = entry && Object.hasOwn(handlers, job.name) ? (handlers as QueueHandlers)[job.name] : undefined;
  if (!entry || !handler) return undefined;
  const problem = payloadError(entry.def, job.data);
  if (problem) throw new UnrecoverableError(`Invalid payload for job "${job.name}" on queue "${queue}": ${problem}`);
  return handler;
}
