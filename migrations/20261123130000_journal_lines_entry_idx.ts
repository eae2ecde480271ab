import type { Knex } from 'knex';

/**
 * journal_lines had indexes on (tenant_id, entry_id) and (tenant_id, account_id) only, but the
 * double-entry trigger (journal_entry_balanced: `where entry_id = …`, deferred, once per line at
 * every commit that posts) and the ON DELETE CASCADE from journal_entries look lines up by
 * entry_id alone: each was a sequential scan of every tenant's lines, so a posting got slower as
 * the whole ledger grew (found by the webhook benchmark, docs/benchmarks.md).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index journal_lines_entry_idx on journal_lines (entry_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists journal_lines_entry_idx');
}
