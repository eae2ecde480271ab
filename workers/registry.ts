import type { QueueName } from '../shared/queues';
import type { JobHandlers } from './types';
import { reportJobs } from './jobs/reports';
import { taxPortalJobs } from './jobs/tax-portal';
import { maintenanceJobs } from './jobs/maintenance';
import { documentJobs } from './jobs/documents';
import { emailJobs } from './jobs/email';
import { webhookJobs } from './jobs/webhooks';

/** Which handlers run on which queue. A new job is one entry in its queue's jobs/<queue>/index.ts. */
export const registry: Partial<Record<QueueName, JobHandlers>> = {
  reports: reportJobs,
  'tax-portal': taxPortalJobs,
  maintenance: maintenanceJobs,
  documents: documentJobs,
  email: emailJobs,
  webhooks: webhookJobs,
};
