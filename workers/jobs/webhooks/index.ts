import type { JobHandlers } from '../../types';
import { processWebhookEventJob } from './processWebhookEvent';

export const webhookJobs: JobHandlers = {
  'process-webhook-event': processWebhookEventJob,
};
