import type { JobHandlers } from '../../types';
import { renderInvoiceDocumentJob } from './renderInvoiceDocument';

export const documentJobs: JobHandlers = {
  'render-invoice-document': renderInvoiceDocumentJob,
};
