import type { JobHandlers } from '../../types';
import { RENDER_REPORT_PDF_JOB } from '../../../shared/commands/reports/reportPdf';
import { renderReportPdfJob } from './renderReportPdf';

export const reportJobs: JobHandlers = {
  [RENDER_REPORT_PDF_JOB]: renderReportPdfJob,
};
