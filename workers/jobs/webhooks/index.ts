import type { HandlersOf } from '../../types';
import { jobs } from '../../../shared/jobs/catalog';
import { processWebhookEventJob } from './processWebhookEvent';

/** The handlers of the catalog's webhooks jobs (shared/jobs/catalog.ts), by job name. */
export const webhookJobs = {
  [jobs.processWebhookEvent.name]: processWebhookEventJob,
} satisfies HandlersOf<'webhooks'>;
