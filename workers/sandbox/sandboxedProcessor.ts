import type { SandboxedJob } from 'bullmq';
import { jobLogContext, runWithLogContext } from '../../shared/logContext';
import { logger } from '../../shared/logger';
import { handlerFor } from '../dispatch';

/**
 * The processor a sandboxed child runs for `queue` (workers/worker.ts forks one child per
 * concurrent job): the payload is checked against the job's catalog schema in the child, before
 * the handler runs, and whatever the job logs carries its id, as in the worker's own process.
 */
export function sandboxedProcessor(queue: string, handlers: object) {
  exitWithWorker();
  return async function processSandboxedJob(job: SandboxedJob) {
    const handler = handlerFor(queue, handlers, job);
    if (!handler) throw new Error(`No handler for job "${job.name}" on queue "${queue}"`);
    return runWithLogContext(jobLogContext(job), () => handler(job as never));
  };
}

let watching = false;

/**
 * A child whose worker died (SIGKILL, OOM) exits when its IPC channel closes. BullMQ's child
 * does not: its job's result and then its uncaughtException handler's report each fail on the
 * closed channel, and the failures feed each other for ever (seen: an orphaned renderer at 100 %
 * CPU and 2 GB after half an hour). The job is not lost: its lock lapses and another worker takes
 * it; what this child wrote is keyed by the business key (docs/resilience.md).
 */
function exitWithWorker(): void {
  if (watching) return;
  watching = true;
  process.once('disconnect', () => {
    logger.warn({ pid: process.pid }, 'sandboxed child: its worker process is gone; exiting');
    process.exit(1);
  });
}
