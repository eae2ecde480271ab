import type { Job } from 'bullmq';
import { sweepStuckWebhookEvents, type SweepOptions } from '../../../shared/webhooks/sweepStuckEvents';

/**
 * Scheduled every 5 minutes (workers/worker.ts): re-runs webhook events whose job was lost or died
 * outside its own failure path, and gives up on those pending past the maximum age
 * (shared/webhooks/sweepStuckEvents.ts). Data may narrow it to a tenant or change the ages.
 */
export async function sweepStuckWebhookEventsJob(job: Job<Pick<SweepOptions, 'tenantId' | 'staleAfterMinutes' | 'maxAgeHours'>>) {
  const { tenantId, staleAfterMinutes, maxAgeHours } = job.data ?? {};
  return sweepStuckWebhookEvents({ tenantId, staleAfterMinutes, maxAgeHours });
}
