import type { SandboxedJob } from 'bullmq';
import { jobLogContext, runWithLogContext } from '../../shared/logContext';
import { handlerFor } from '../dispatch';
import { documentJobs } from '../jobs/documents';

/**
 * Sandboxed processor for the documents queue: PDF/ZUGFeRD/ebInterface rendering is CPU-bound,
 * and run in the worker's own event loop it would delay the lock renewals of every other job of
 * that process. BullMQ runs this file in child processes (see workers/worker.ts).
 */
export default async function processDocumentJob(job: SandboxedJob) {
  // In the child: the payload is checked against the job's catalog schema here, before the handler runs.
  const handler = handlerFor('documents', documentJobs, job);
  if (!handler) throw new Error(`No handler for job "${job.name}" on queue "documents"`);
  // In the child process too, whatever the job logs carries its id (workers/worker.ts does the same).
  return runWithLogContext(jobLogContext(job), () => handler(job as never));
}
