import type { Knex } from 'knex';

/**
 * provider_payment_refs: the other ids a provider gives a booked payment (Stripe's PaymentIntent
 * and Charge), so a refund naming only those finds the payment's incoming invoice (docs/webhooks.md,
 * "Ordering"). A table, not a column: the mapping may arrive before the invoice, and a payment has
 * several ids. webhook_events_pending_idx serves the maintenance sweep.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('provider_payment_refs', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('provider').notNullable();
    t.text('ref').notNullable();
    t.text('external_id').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['tenant_id', 'provider', 'ref', 'external_id']);
    t.check("provider in ('stripe', 'paypal', 'mollie', 'bank')", [], 'provider_payment_refs_provider_check');
  });
  await knex.raw("create index webhook_events_pending_idx on webhook_events (received_at) where status = 'pending'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists webhook_events_pending_idx');
  await knex.schema.dropTableIfExists('provider_payment_refs');
}
