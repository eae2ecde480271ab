import type { CommandContext } from '../types';

/** Sent webhook events are kept this long (to look up, to redeliver), then purged with their deliveries. */
export const WEBHOOK_EVENT_RETENTION_DAYS = 30;

/**
 * Delete outbound webhook events older than the retention, `batch` at a time, with their
 * deliveries (ON DELETE CASCADE); an event with a delivery still pending stays until it settles.
 * The events carry copies of customer data (the objects as sent): without this they would outlive
 * the customer's own deletion. A maintenance command across tenants, so no actor and no audit row
 * (the events are copies, not records). Idempotent.
 */
export async function purgeWebhookEvents(
  { trx }: Pick<CommandContext, 'trx'>,
  opts: { batch?: number; olderThanDays?: number } = {},
): Promise<{ purged: number }> {
  const purged = await trx('outboundEvents')
    .whereIn(
      'id',
      trx('outboundEvents as e')
        .select('e.id')
        .where('e.createdAt', '<', trx.raw('now() - make_interval(days => ?)', [opts.olderThanDays ?? WEBHOOK_EVENT_RETENTION_DAYS]))
        .whereNotExists(trx('webhookDeliveries as d').whereRaw('d.event_id = e.id').where('d.status', 'pending'))
        .orderBy('e.createdAt')
        .limit(opts.batch ?? 1000),
    )
    .delete();
  return { purged };
}
