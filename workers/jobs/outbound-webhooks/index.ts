import type { HandlersOf } from '../../types';
import { jobs } from '../../../shared/jobs/catalog';
import { deliverWebhookJob } from './deliverWebhook';

/** The handlers of the catalog's outbound-webhooks jobs (shared/jobs/catalog.ts), by job name. */
export const outboundWebhookJobs = {
  [jobs.deliverWebhook.name]: deliverWebhookJob,
} satisfies HandlersOf<'outbound-webhooks'>;
