import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { JobWaitTimeout, runAndWait } from '../queues';
import { jobs, periodOfJob, type ReportPdfPayload } from '../jobs/catalog';
import { AppError, serviceUnavailable } from '../errors';
import { logger } from '../logger';
import { loadReportTenant, u30Report, type ReportTenant } from '../queries/reports/vatReturn';
import { bwaReport } from '../queries/reports/bwa';

/**
 * Report PDFs are rendered by the `reports` worker (CPU stays out of the API); the API queues the
 * job and waits up to RENDER_WAIT_MS. The job id is the business key plus a fingerprint of the
 * figures, so identical requests share a job and a changed book renders anew; the PDF comes back
 * as the job's return value, which BullMQ keeps 24 h (the cache). Job data holds ids only: the
 * job and its payload are jobs.renderReportPdf (shared/jobs/catalog.ts).
 */

export function reportFingerprint(tenant: ReportTenant, figures: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify({ name: tenant.name, taxNumber: tenant.taxNumber, vatId: tenant.vatId, address: tenant.address, figures }))
    .digest('hex')
    .slice(0, 24);
}

/** What the worker does: read the figures, render the PDF. */
export async function renderReportPdf(db: Knex, data: ReportPdfPayload): Promise<Buffer> {
  const tenant = await loadReportTenant(db, data.tenantId);
  const createdAt = new Date();
  if (data.report === 'u30') {
    const r = await u30Report(db, tenant, periodOfJob(data));
    // Imported on first use: only the worker's renderers draw report PDFs (docs/production.md).
    const { renderU30Pdf } = await import('../formats/reportPdf/u30Pdf');
    return renderU30Pdf({
      ...r,
      company: { name: tenant.name, taxNumber: tenant.taxNumber, vatId: tenant.vatId, address: tenant.address },
      createdAt,
    });
  }
  const { renderBwaPdf } = await import('../formats/reportPdf/bwaPdf');
  return renderBwaPdf({ companyName: tenant.name, report: await bwaReport(db, tenant, data.year), createdAt });
}

/** What the API does: queue (or join) the render job and wait for it, bounded. */
export async function obtainReportPdf(data: ReportPdfPayload, waitMs: number): Promise<Buffer> {
  const jobId = jobs.renderReportPdf.jobId(data);
  let result: { pdf?: string } | undefined;
  try {
    ({ result } = await runAndWait<{ pdf?: string }, ReportPdfPayload>(jobs.renderReportPdf, data, waitMs));
  } catch (err) {
    if (err instanceof JobWaitTimeout) throw serviceUnavailable('The report is still being rendered; retry shortly', err.retryAfterSeconds);
    if (err instanceof AppError) throw err;
    // A failed render is our bug: drop the failed job so the next request tries again.
    logger.error({ jobId, err: (err as Error).message }, 'report rendering failed');
    await (err as { job?: { remove: () => Promise<void> } }).job?.remove().catch(() => undefined);
    throw new AppError('INTERNAL_ERROR', 500, 'The report could not be rendered');
  }
  if (!result?.pdf) throw new AppError('INTERNAL_ERROR', 500, 'The report could not be rendered');
  return Buffer.from(result.pdf, 'base64');
}
