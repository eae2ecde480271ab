import type { HandlersOf } from '../../types';
import { jobs } from '../../../shared/jobs/catalog';
import { purgeDeletedCustomersJob } from './purgeDeletedCustomers';
import { relayOutboxJob } from './relayOutbox';
import { purgeIdempotencyKeysJob } from './purgeIdempotencyKeys';
import { sweepStuckWebhookEventsJob } from './sweepStuckWebhookEvents';
import { purgeUnknownLoginAttemptsJob } from './purgeUnknownLoginAttempts';
import { purgeSentOutboxJob } from './purgeSentOutbox';
import { purgeWebhookEventsJob } from './purgeWebhookEvents';
import { fetchEcbRatesJob } from './fetchEcbRates';
import { runRecurringInvoicesJob } from './runRecurringInvoices';
import { dunningDailyJob, runDunningJob } from './dunning';

/** The handlers of the catalog's maintenance jobs (shared/jobs/catalog.ts), by job name. */
export const maintenanceJobs = {
  [jobs.purgeDeletedCustomers.name]: purgeDeletedCustomersJob,
  [jobs.relayOutbox.name]: relayOutboxJob,
  [jobs.purgeIdempotencyKeys.name]: purgeIdempotencyKeysJob,
  [jobs.sweepStuckWebhookEvents.name]: sweepStuckWebhookEventsJob,
  [jobs.purgeUnknownLoginAttempts.name]: purgeUnknownLoginAttemptsJob,
  [jobs.purgeSentOutbox.name]: purgeSentOutboxJob,
  [jobs.purgeWebhookEvents.name]: purgeWebhookEventsJob,
  [jobs.fetchEcbRates.name]: fetchEcbRatesJob,
  [jobs.runRecurringInvoices.name]: runRecurringInvoicesJob,
  [jobs.dunningDaily.name]: dunningDailyJob,
  [jobs.runDunning.name]: runDunningJob,
} satisfies HandlersOf<'maintenance'>;
