import type { Job } from 'bullmq';
import { db } from '../../../shared/db';
import { purgeDeletedCustomers } from '../../../shared/commands/purgeDeletedCustomers';
import type { PurgeDeletedCustomersPayload } from '../../../shared/jobs/catalog';

/** Scheduled daily for all tenants, or on demand for one tenant (POST /api/maintenance/purge-customers). */
export async function purgeDeletedCustomersJob(job: Job<PurgeDeletedCustomersPayload>) {
  return db().transaction((trx) => purgeDeletedCustomers({ trx }, { tenantId: job.data.tenantId }));
}
