import type { Knex } from 'knex';

/**
 * Drops three indexes every write maintained and no query needs, each covered by another with the
 * same leading columns (docs/benchmarks.md, "PostgreSQL's share"). There is no tenant deletion;
 * should one come, the cascade to invoice_items would scan it per tenant: delete the tenant's
 * invoices first, or bring (tenant_id, invoice_id) back.
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
