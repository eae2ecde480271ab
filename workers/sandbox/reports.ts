import type { SandboxedJob } from 'bullmq';
import { jobLogContext, runWithLogContext } from '../../shared/logContext';
import { reportJobs } from '../jobs/reports';

/** Sandboxed processor for the reports queue: report PDFs are CPU-bound like invoice documents. */
export default async function processReportJob(job: SandboxedJob) {
  const handler = reportJobs[job.name];
  if (!handler) throw new Error(`No handler for job "${job.name}" on queue "reports"`);
  // In the child process too, whatever the job logs carries its id (workers/worker.ts does the same).
  return runWithLogContext(jobLogContext(job), () => handler(job as never));
}
