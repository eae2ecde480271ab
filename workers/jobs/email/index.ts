import type { HandlersOf } from '../../types';
import { jobs } from '../../../shared/jobs/catalog';
import { sendInvoiceEmailJob } from './sendInvoiceEmail';
import { notifyWebhookDisabledJob } from './notifyWebhookDisabled';

/** The handlers of the catalog's email jobs (shared/jobs/catalog.ts), by job name. */
export const emailJobs = {
  [jobs.sendInvoiceEmail.name]: sendInvoiceEmailJob,
  [jobs.notifyWebhookDisabled.name]: notifyWebhookDisabledJob,
} satisfies HandlersOf<'email'>;
