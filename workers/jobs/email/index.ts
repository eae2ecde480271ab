import type { HandlersOf } from '../../types';
import { jobs } from '../../../shared/jobs/catalog';
import { sendInvoiceEmailJob } from './sendInvoiceEmail';

/** The handlers of the catalog's email jobs (shared/jobs/catalog.ts), by job name. */
export const emailJobs = {
  [jobs.sendInvoiceEmail.name]: sendInvoiceEmailJob,
} satisfies HandlersOf<'email'>;
