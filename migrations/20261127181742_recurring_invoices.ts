import type { Knex } from 'knex';

/**
 * Recurring invoices (docs/recurring-invoices.md): the templates, and one row per billed period.
 * The period is the business key: (recurring_invoice_id, period_start) is unique, so a run that
 * repeats, a worker that dies mid-run or two workers at once cannot bill a period twice.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('recurring_invoices', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.uuid('customer_id').notNullable().references('id').inTable('customers');
    t.jsonb('items').notNullable();
    t.text('interval').notNullable();
    t.integer('day_of_month');
    t.date('start_date').notNullable();
    t.date('end_date');
    t.boolean('auto_send').notNullable().defaultTo(false);
    t.integer('payment_term_days');
    t.text('notes');
    t.text('status').notNullable().defaultTo('active');
    // Index of the next period to bill (0 = the first): its date follows from start, interval, day.
    t.integer('next_period').notNullable().defaultTo(0);
    // That period's start (the day its invoice is due); null when endDate has passed.
    t.date('next_date');
    t.timestamp('last_run_at', { useTz: true });
    t.text('last_error');
    t.timestamp('last_error_at', { useTz: true });
    t.timestamp('deleted_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check("interval in ('monthly', 'quarterly', 'halfYearly', 'yearly')", [], 'recurring_invoices_interval_check');
    t.check("status in ('active', 'paused', 'ended')", [], 'recurring_invoices_status_check');
    t.check('day_of_month between 1 and 31', [], 'recurring_invoices_day_check');
    t.check('end_date is null or end_date >= start_date', [], 'recurring_invoices_end_check');
    t.index(['tenant_id', 'created_at']);
  });
  // The daily run's scan: active templates, not deleted.
  await knex.raw(`create index recurring_invoices_active_idx on recurring_invoices (next_date) where deleted_at is null and status = 'active'`);

  await knex.schema.createTable('recurring_invoice_periods', (t) => {
    t.uuid('recurring_invoice_id').notNullable().references('id').inTable('recurring_invoices').onDelete('CASCADE');
    t.uuid('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.date('period_start').notNullable();
    t.date('period_end').notNullable();
    t.uuid('invoice_id').references('id').inTable('invoices').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['recurring_invoice_id', 'period_start']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('recurring_invoice_periods');
  await knex.schema.dropTableIfExists('recurring_invoices');
}
