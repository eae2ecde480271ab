import { db } from '../../../shared/db';
import { purgeWebhookEvents } from '../../../shared/commands/outboundWebhooks/purge';

/** Daily: outbound webhook events past their retention (WEBHOOK_EVENT_RETENTION_DAYS), one batch per transaction. */
export async function purgeWebhookEventsJob() {
  const batch = 1000;
  let total = 0;
  for (;;) {
    const { purged } = await db().transaction((trx) => purgeWebhookEvents({ trx }, { batch }));
    total += purged;
    if (purged < batch) return { purged: total };
  }
}
