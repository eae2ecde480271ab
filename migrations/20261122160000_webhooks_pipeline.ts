import type { Knex } from 'knex';

/**
 * Webhook pipeline lookups. The exactly-once guarantees themselves already live in the core
 * schema (invoices_external_unique, journal_entries (tenant_id, source_type, source_id)); these
 * indexes serve the duplicate checks by provider event id and by money movement, and the
 * refund → original-entry lookup.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index webhook_events_event_idx on webhook_events (tenant_id, provider, external_id)');
  await knex.raw('create index webhook_events_money_idx on webhook_events (tenant_id, provider, money_external_id) where money_external_id is not null');
  await knex.raw('create index webhook_events_log_idx on webhook_events (tenant_id, provider, received_at desc, id desc)');
  await knex.raw('create index journal_entries_reverses_idx on journal_entries (tenant_id, reverses_entry_id) where reverses_entry_id is not null');
  await knex.raw('create index invoices_supplier_idx on invoices (tenant_id, supplier_id) where supplier_id is not null');
}

export async function down(knex: Knex): Promise<void> {
  for (const name of [
    'webhook_events_event_idx',
    'webhook_events_money_idx',
    'webhook_events_log_idx',
    'journal_entries_reverses_idx',
    'invoices_supplier_idx',
  ]) {
    await knex.raw(`drop index if exists ${name}`);
  }
}
