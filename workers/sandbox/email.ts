import type { SandboxedJob } from 'bullmq';
import { jobLogContext, runWithLogContext } from '../../shared/logContext';
import { handlerFor } from '../dispatch';
import { emailJobs } from '../jobs/email';

/**
 * Sandboxed processor for the email queue: a send renders its PDF or ZUGFeRD attachment when the
 * artifact cache has none, and a long invoice takes seconds of CPU. In the worker's own event loop
 * that would delay the lock renewals of every other job of the process (see documents.ts).
 */
export default async function processEmailJob(job: SandboxedJob) {
  // In the child: the payload is checked against the job's catalog schema here, before the handler runs.
  const handler = handlerFor('email', emailJobs, job);
  if (!handler) throw new Error(`No handler for job "${job.name}" on queue "email"`);
  // In the child process too, whatever the job logs carries its id (workers/worker.ts does the same).
  return runWithLogContext(jobLogContext(job), () => handler(job as never));
}
