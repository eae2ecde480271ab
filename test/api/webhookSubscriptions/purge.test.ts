/**
 * Settled outbound webhook events are purged after WEBHOOK_EVENT_RETENTION_DAYS with their
 * deliveries; an event with a pending delivery stays (docs/outbound-webhooks.md, "Operations").
 */
import { describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { WEBHOOK_EVENT_RETENTION_DAYS } from '../../../shared/commands/outboundWebhooks/purge';
import { purgeWebhookEventsJob } from '../../../workers/jobs/maintenance/purgeWebhookEvents';
import { createTenant } from '../../helpers/factories';

async function eventWith(tenantId: string, subscriptionId: string, ageDays: number, statuses: string[]) {
  const [event] = await db()('outboundEvents')
    .insert({ tenantId, type: 'customer.created', object: JSON.stringify({ name: 'Alt' }), createdAt: db().raw('now() - make_interval(days => ?)', [ageDays]) })
    .returning('id');
  const deliveries = await db()('webhookDeliveries')
    .insert(statuses.map((status) => ({ tenantId, subscriptionId, eventId: event.id, status })))
    .returning('id');
  // A redelivery of the first (its original is deleted with it).
  if (deliveries.length)
    await db()('webhookDeliveries').insert({ tenantId, subscriptionId, eventId: event.id, status: statuses[0], redeliveryOf: deliveries[0].id });
  return event.id as string;
}

describe('purge-webhook-events', () => {
  it('removes settled events past the retention with their deliveries; keeps younger ones and those still pending', async () => {
    const tenant = await createTenant();
    const [sub] = await db()('webhookSubscriptions')
      .insert({ tenantId: tenant.id, url: 'https://hooks.example.com/x', events: ['customer.created'], secretEnc: 'x' })
      .returning('id');
    const old = await eventWith(tenant.id, sub.id, WEBHOOK_EVENT_RETENTION_DAYS + 1, ['delivered', 'failed']);
    const oldPending = await eventWith(tenant.id, sub.id, WEBHOOK_EVENT_RETENTION_DAYS + 1, ['delivered', 'pending']);
    const young = await eventWith(tenant.id, sub.id, WEBHOOK_EVENT_RETENTION_DAYS - 1, ['delivered']);

    const result = await purgeWebhookEventsJob();
    expect(result.purged).toBeGreaterThanOrEqual(1);
    const left = (await db()('outboundEvents').where({ tenantId: tenant.id }).pluck('id')).sort();
    expect(left).toEqual([oldPending, young].sort());
    expect(await db()('webhookDeliveries').where({ eventId: old })).toHaveLength(0);
    expect(await db()('webhookDeliveries').where({ eventId: oldPending })).toHaveLength(3);
    expect((await purgeWebhookEventsJob()).purged).toBe(0);
  });
});
