import type { Job } from 'bullmq';
import { db } from '../../../shared/db';
import { renderReportPdf } from '../../../shared/documents/reportPdf';
import type { ReportPdfPayload } from '../../../shared/jobs/catalog';

/**
 * Render a report PDF (U30 form, BWA). Idempotent by nature: it only reads; the result is the
 * job's return value (base64), which the waiting API request picks up.
 */
export async function renderReportPdfJob(job: Job<ReportPdfPayload>) {
  const pdf = await renderReportPdf(db(), job.data);
  return { pdf: pdf.toString('base64'), bytes: pdf.length };
}
