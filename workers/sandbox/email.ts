import type { SandboxedJob } from 'bullmq';
import { jobLogContext, runWithLogContext } from '../../shared/logContext';
import { emailJobs } from '../jobs/email';

/**
 * Sandboxed processor for the email queue: a send renders its PDF or ZUGFeRD attachment when the
 * artifact cache has none, and a long invoice takes seconds of CPU. In the worker's own event loop
 * that would delay the lock renewals of every other job of the process (see documents.ts).
 */
export default async function processEmailJob(job: SandboxedJob) {
  const handler = emailJobs[job.name];
  if (!handler) throw new Error(`No handler for job "${job.name}" on queue "email"`);
  // In the child process too, whatever the job logs carries its id (workers/worker.ts does the same).
  return runWithLogContext(jobLogContext(job), () => handler(job as never));
}
