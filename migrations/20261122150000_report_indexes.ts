import type { Knex } from 'knex';

/**
 * Indexes for the reports (docs/reports.md): incoming invoices by invoice_date, a covering index
 * on items for the U30 aggregation, and at most one live U30 per tenant and period unless flagged
 * as a resubmission, enforced here so two concurrent requests cannot both pass a check-then-insert.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw("create index invoices_incoming_date_idx on invoices (tenant_id, invoice_date) where type = 'eingangsrechnung' and deleted_at is null");
  await knex.raw('create index invoice_items_report_idx on invoice_items (invoice_id) include (tax_rate, net_amount)');
  await knex.raw(`
    create unique index report_submissions_live_unique on report_submissions (tenant_id, kind, year, period)
    where mode = 'live' and status in ('queued', 'submitted', 'accepted') and not resubmission
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists report_submissions_live_unique');
  await knex.raw('drop index if exists invoice_items_report_idx');
  await knex.raw('drop index if exists invoices_incoming_date_idx');
}
