import type { CatalogQueue, HandlersOf } from './types';
import { reportJobs } from './jobs/reports';
import { taxPortalJobs } from './jobs/tax-portal';
import { maintenanceJobs } from './jobs/maintenance';
import { documentJobs } from './jobs/documents';
import { emailJobs } from './jobs/email';
import { webhookJobs } from './jobs/webhooks';
import { outboundWebhookJobs } from './jobs/outbound-webhooks';

/**
 * Which handlers run on which queue: each catalog entry (shared/jobs/catalog.ts) mapped by its job
 * name to its handler in its queue's workers/jobs/<queue>/index.ts. Typed so that every queue of
 * the catalog is here and every entry has its handler: a job declared without one does not
 * compile. Adding a job is one catalog entry and one handler (docs/jobs.md).
 */
export const registry: { [Q in CatalogQueue]: HandlersOf<Q> } = {
  reports: reportJobs,
  'tax-portal': taxPortalJobs,
  maintenance: maintenanceJobs,
  documents: documentJobs,
  email: emailJobs,
  webhooks: webhookJobs,
  'outbound-webhooks': outboundWebhookJobs,
};
