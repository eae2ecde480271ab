import type { Knex } from 'knex';

/**
 * Outbound webhooks (docs/outbound-webhooks.md): a tenant's subscriptions, the events written by
 * the commands that caused them, and one delivery per (event, subscription) with its attempts.
 * The signing secret is AES-GCM encrypted (shared/crypto/secretBox.ts), not hashed: every delivery
 * is signed with it. An event keeps the body it is sent with, so a retry or a redelivery sends the
 * same object.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_subscriptions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.text('url').notNullable();
    t.specificType('events', 'text[]').notNullable();
    t.text('description');
    t.text('secret_enc').notNullable();
    t.boolean('active').notNullable().defaultTo(true);
    // Since when every delivery has failed (cleared by any success): 3 days of it disable the subscription.
    t.timestamp('failing_since', { useTz: true });
    t.timestamp('disabled_at', { useTz: true });
    t.text('disabled_reason');
    t.uuid('created_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true });
  });
  // The fan-out's lookup: a tenant's active subscriptions, on every event a command emits.
  await knex.raw('create index webhook_subscriptions_fanout_idx on webhook_subscriptions (tenant_id) where active and deleted_at is null');

  await knex.schema.createTable('outbound_events', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.text('type').notNullable();
    // The event's data.object: the API's representation of the resource when the event happened
    // (json, not jsonb: kept as written, key order included).
    t.json('object').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.uuid('subscription_id').notNullable().references('id').inTable('webhook_subscriptions').onDelete('CASCADE');
    t.uuid('event_id').notNullable().references('id').inTable('outbound_events').onDelete('CASCADE');
    t.text('status').notNullable().defaultTo('pending');
    // [{ at, ms, statusCode, error }] newest last, capped (shared/commands/outboundWebhooks/deliveries.ts).
    t.jsonb('attempts').notNullable().defaultTo('[]');
    t.integer('attempt_count').notNullable().defaultTo(0);
    t.integer('last_status_code');
    t.text('last_error');
    t.uuid('redelivery_of').references('id').inTable('webhook_deliveries').onDelete('SET NULL');
    t.timestamp('delivered_at', { useTz: true });
    t.timestamp('failed_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'subscription_id', 'created_at']);
  });
  await knex.raw(`
    alter table webhook_deliveries
      add constraint webhook_deliveries_status_check check (status in ('pending', 'delivered', 'failed'))
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('webhook_deliveries');
  await knex.schema.dropTableIfExists('outbound_events');
  await knex.schema.dropTableIfExists('webhook_subscriptions');
}
