import type { SandboxedJob } from 'bullmq';
import { jobLogContext, runWithLogContext } from '../../shared/logContext';
import { handlerFor } from '../dispatch';
import { reportJobs } from '../jobs/reports';

/** Sandboxed processor for the reports queue: report PDFs are CPU-bound like invoice documents. */
export default async function processReportJob(job: SandboxedJob) {
  // In the child: the payload is checked against the job's catalog schema here, before the handler runs.
  const handler = handlerFor('reports', reportJobs, job);
  if (!handler) throw new Error(`No handler for job "${job.name}" on queue "reports"`);
  // In the child process too, whatever the job logs carries its id (workers/worker.ts does the same).
  return runWithLogContext(jobLogContext(job), () => handler(job as never));
}
