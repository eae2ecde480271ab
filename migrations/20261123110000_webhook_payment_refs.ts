import type { Knex } from 'knex';

/**
 * provider_payment_refs: the other ids a provider gives a booked payment (Stripe: the invoice's
 * PaymentIntent pi_… and Charge ch_…), so that a refund which names only those finds the payment's
 * incoming invoice (invoices.external_id = in_…). Stripe's charge.refunded lost charge.invoice in
 * API 2025-03-31.basil; the mapping now comes from invoice_payment.paid. A table rather than a
 * column on invoices: the mapping may arrive before the invoice exists, and one payment has
 * several ids. One ref may name several payments (a PaymentIntent paying two invoices); the
 * pipeline then links nothing.
 *
 * webhook_events_pending_idx serves the maintenance sweep of rows left pending by a lost job.
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
