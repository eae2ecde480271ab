import type { HandlersOf } from '../../types';
import { jobs } from '../../../shared/jobs/catalog';
import { sendInvoiceEmailJob } from './sendInvoiceEmail';
import { notifyWebhookDisabledJob } from './notifyWebhookDisabled';
import { sendAccountNoticeJob, sendPasswordResetEmailJob } from './accountEmails';

/** The handlers of the catalog's email jobs (shared/jobs/catalog.ts), by job name. */
export const emailJobs = {
  [jobs.sendInvoiceEmail.name]: sendInvoiceEmailJob,
  [jobs.notifyWebhookDisabled.name]: notifyWebhookDisabledJob,
  [jobs.sendPasswordResetEmail.name]: sendPasswordResetEmailJob,
  [jobs.sendAccountNotice.name]: sendAccountNoticeJob,
} satisfies HandlersOf<'email'>;
