import { db } from '../../../shared/db';
import { purgeExpiredIdempotencyKeys } from '../../../shared/idempotency';

/** Idempotency keys are honoured for 24 h (docs/invoices.md, "Idempotency"); older rows are removed hourly. */
export async function purgeIdempotencyKeysJob() {
  return { purged: await purgeExpiredIdempotencyKeys(db()) };
}
