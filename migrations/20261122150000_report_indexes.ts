import type { Knex } from 'knex';

/**
 * Indexes for the tax and management reports (docs/reports.md):
 * - Sales are selected by (tenant, type, issue_date): covered by invoices_tenant_id_type_issue_date_index
 *   from the core schema. Incoming invoices are selected by invoice_date, which had no index.
 * - Items are joined by invoice_id; the covering index lets the U30 aggregation read rate and net
 *   without touching the item heap.
 * - At most one live U30 per tenant and period that is queued, in flight or accepted, unless it is
 *   flagged as a resubmission (a correction). Enforced here, so two concurrent requests cannot both
 *   pass a check-then-insert.
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
