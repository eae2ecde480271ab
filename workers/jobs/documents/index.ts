import type { HandlersOf } from '../../types';
import { jobs } from '../../../shared/jobs/catalog';
import { renderInvoiceDocumentJob } from './renderInvoiceDocument';

/** The handlers of the catalog's documents jobs (shared/jobs/catalog.ts), by job name. */
export const documentJobs = {
  [jobs.renderInvoiceDocument.name]: renderInvoiceDocumentJob,
} satisfies HandlersOf<'documents'>;
