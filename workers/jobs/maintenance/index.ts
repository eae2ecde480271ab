import type { JobHandlers } from '../../types';
import { purgeDeletedCustomersJob } from './purgeDeletedCustomers';
import { relayOutboxJob } from './relayOutbox';
import { purgeIdempotencyKeysJob } from './purgeIdempotencyKeys';
import { sweepStuckWebhookEventsJob } from './sweepStuckWebhookEvents';
import { purgeUnknownLoginAttemptsJob } from './purgeUnknownLoginAttempts';
import { purgeSentOutboxJob } from './purgeSentOutbox';

export const maintenanceJobs: JobHandlers = {
  'purge-deleted-customers': purgeDeletedCustomersJob,
  'relay-outbox': relayOutboxJob,
  'purge-idempotency-keys': purgeIdempotencyKeysJob,
  'sweep-stuck-webhook-events': sweepStuckWebhookEventsJob,
  'purge-unknown-login-attempts': purgeUnknownLoginAttemptsJob,
  'purge-sent-outbox': purgeSentOutboxJob,
};
