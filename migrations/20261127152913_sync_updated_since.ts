import type { Knex } from 'knex';

/**
 * Incremental sync (docs/sync.md): the invoice, customer and supplier lists take updatedSince and
 * afterId and page by (updated_at, id). One index per list for that order, deleted rows included
 * (they are what a sync must see). updated_at is kept to milliseconds: the API shows timestamps
 * as ISO strings with milliseconds, and a client's cursor (updatedSince, afterId) must name a row's
 * position exactly; with microseconds stored, two rows within one millisecond could sort one way
 * in the database and the other way in the client's cursor, and one of them would be skipped.
 * Lowering the precision rewrites the three tables once (seconds at our sizes, under a lock).
 */
const TABLES = ['invoices', 'customers', 'suppliers'] as const;

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.raw(`alter table ${table} alter column updated_at type timestamptz(3)`);
    await knex.raw(`create index ${table}_sync_idx on ${table} (tenant_id, updated_at, id)`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.raw(`drop index if exists ${table}_sync_idx`);
    await knex.raw(`alter table ${table} alter column updated_at type timestamptz`);
  }
}
