import type { Job } from 'bullmq';
import { sweepStuckWebhookEvents } from '../../../shared/webhooks/sweepStuckEvents';
import type { SweepStuckWebhookEventsPayload } from '../../../shared/jobs/catalog';
import { withRecoveryLock } from '../../../shared/recovery';

/**
 * Scheduled every 5 minutes (workers/worker.ts): re-runs webhook events whose job was lost or died
 * outside its own failure path, and gives up on those pending past the maximum age
 * (shared/webhooks/sweepStuckEvents.ts). Data may narrow it to a tenant or change the ages. The
 * workers' recovery loop (workers/recoveryLoop.ts) runs the same sweep without depending on this
 * schedule, which lives in Redis; both take the recovery lock, so one sweep runs at a time.
 */
export async function sweepStuckWebhookEventsJob(job: Job<SweepStuckWebhookEventsPayload>) {
  const { tenantId, staleAfterMinutes, maxAgeHours } = job.data ?? {};
  const result = await withRecoveryLock(() => sweepStuckWebhookEvents({ tenantId, staleAfterMinutes, maxAgeHours }), tenantId);
  return result ?? { skipped: 'another recovery sweep is running' };
}
