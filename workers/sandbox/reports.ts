import type { SandboxedJob } from 'bullmq';
import { reportJobs } from '../jobs/reports';

/** Sandboxed processor for the reports queue: report PDFs are CPU-bound like invoice documents. */
export default async function processReportJob(job: SandboxedJob) {
  const handler = reportJobs[job.name];
  if (!handler) throw new Error(`No handler for job "${job.name}" on queue "reports"`);
  return handler(job as never);
}
