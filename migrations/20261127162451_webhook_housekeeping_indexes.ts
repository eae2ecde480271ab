import type { Knex } from 'knex';

/**
 * Indexes of the outbound webhook tables' housekeeping (docs/outbound-webhooks.md, "Operations"):
 * - pending deliveries by age: the recovery loop (shared/recovery.ts) looks every 20 s for
 *   deliveries whose job Redis may have lost; partial, since delivered and failed rows (nearly all)
 *   are never looked up that way;
 * - events by age: the daily purge of settled events past their retention;
 * - deliveries by event, and redeliveries by original: the purge's check for pending deliveries,
 *   and the ON DELETE CASCADE / SET NULL its deletes set off, would otherwise scan the table.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw("create index if not exists webhook_deliveries_pending_idx on webhook_deliveries (updated_at) where status = 'pending'");
  await knex.raw('create index if not exists outbound_events_created_idx on outbound_events (created_at)');
  await knex.raw('create index if not exists webhook_deliveries_event_idx on webhook_deliveries (event_id)');
  await knex.raw('create index if not exists webhook_deliveries_redelivery_idx on webhook_deliveries (redelivery_of) where redelivery_of is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists webhook_deliveries_redelivery_idx');
  await knex.raw('drop index if exists webhook_deliveries_event_idx');
  await knex.raw('drop index if exists outbound_events_created_idx');
  await knex.raw('drop index if exists webhook_deliveries_pending_idx');
}
