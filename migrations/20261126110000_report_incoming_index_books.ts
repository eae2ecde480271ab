import type { Knex } from 'knex';

/**
 * The reports keep a finalized document that was soft-deleted (shared/queries/reports/books.ts:
 * `deleted_at is null or finalized_at is not null`). The incoming-invoice index of
 * 20261122150000_report_indexes was partial on `deleted_at is null`, which that predicate does not
 * imply, so the planner could no longer use it. Partial on the type alone, it serves the reports
 * and every query that still filters `deleted_at is null` (deleted incoming invoices are few).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists invoices_incoming_date_idx');
  await knex.raw("create index invoices_incoming_date_idx on invoices (tenant_id, invoice_date) where type = 'eingangsrechnung'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists invoices_incoming_date_idx');
  await knex.raw("create index invoices_incoming_date_idx on invoices (tenant_id, invoice_date) where type = 'eingangsrechnung' and deleted_at is null");
}
