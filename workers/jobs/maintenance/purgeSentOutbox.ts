import { purgeSentOutbox } from '../../../shared/outbox';

/** Outbox rows already handed to Redis are kept for a week (OUTBOX_RETENTION_DAYS), then removed daily. */
export async function purgeSentOutboxJob() {
  return { purged: await purgeSentOutbox() };
}
