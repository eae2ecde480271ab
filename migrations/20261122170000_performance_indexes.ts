import type { Knex } from 'knex';

/**
 * Indexes found missing by the benchmarks (docs/benchmarks.md):
 * - every invoice read looked up the credit notes that reverse it (related_invoice_id; a column
 *   since 20261126100000), which scanned all of a tenant's credit notes;
 * - the invoice list filters non-deleted invoices by status and issue date and pages by
 *   (issue_date desc, created_at desc, id desc).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index invoices_related_idx on invoices (tenant_id, related_invoice_id) where related_invoice_id is not null');
  await knex.raw('create index invoices_list_idx on invoices (tenant_id, issue_date desc, created_at desc, id desc) where deleted_at is null');
  await knex.raw('create index invoices_list_status_idx on invoices (tenant_id, status, issue_date desc) where deleted_at is null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists invoices_related_idx');
  await knex.raw('drop index if exists invoices_list_idx');
  await knex.raw('drop index if exists invoices_list_status_idx');
}
