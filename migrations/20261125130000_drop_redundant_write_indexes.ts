import type { Knex } from 'knex';

/**
 * Three indexes that every write maintained and no query needs, each covered by another index
 * with the same leading columns (docs/benchmarks.md, "PostgreSQL's share"):
 *
 * - invoice_items (tenant_id, invoice_id): every read of items is by invoice (with its tenant),
 *   served by the unique (invoice_id, position), which also gives their order. Ten index
 *   insertions fewer per ten-item invoice.
 * - journal_lines (tenant_id, entry_id): lines are read by entry, served by
 *   journal_lines_entry_idx (entry_id); tenant_id lookups keep (tenant_id, account_id).
 * - webhook_events (tenant_id, provider, received_at): the delivery log's
 *   (tenant_id, provider, received_at desc, id desc) has the same leading columns.
 *
 * There is no tenant deletion. Should one come: the cascade from tenants straight to invoice_items
 * would scan that table once per deleted tenant; delete the tenant's invoices first (their items
 * go by invoice_id) or bring the first index back.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists invoice_items_tenant_id_invoice_id_index');
  await knex.raw('drop index if exists journal_lines_tenant_id_entry_id_index');
  await knex.raw('drop index if exists webhook_events_tenant_id_provider_received_at_index');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('create index if not exists invoice_items_tenant_id_invoice_id_index on invoice_items (tenant_id, invoice_id)');
  await knex.raw('create index if not exists journal_lines_tenant_id_entry_id_index on journal_lines (tenant_id, entry_id)');
  await knex.raw('create index if not exists webhook_events_tenant_id_provider_received_at_index on webhook_events (tenant_id, provider, received_at)');
}
