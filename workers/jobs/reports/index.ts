import type { HandlersOf } from '../../types';
import { jobs } from '../../../shared/jobs/catalog';
import { renderReportPdfJob } from './renderReportPdf';

/** The handlers of the catalog's reports jobs (shared/jobs/catalog.ts), by job name. */
export const reportJobs = {
  [jobs.renderReportPdf.name]: renderReportPdfJob,
} satisfies HandlersOf<'reports'>;
