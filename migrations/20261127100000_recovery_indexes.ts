import type { Knex } from 'knex';

/**
 * The recovery sweep (shared/recovery.ts) looks every RECOVERY_INTERVAL_MS for e-mail deliveries
 * and U30 submissions left unfinished longer than RECOVERY_STALE_AFTER_MS, oldest first. Partial
 * indexes on the unfinished states: they hold only the rows in flight (a handful), however many
 * deliveries and submissions have been sent, so the sweep costs nothing when there is nothing to do.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw("create index deliveries_unfinished_idx on deliveries (updated_at) where status in ('queued', 'sending')");
  await knex.raw("create index report_submissions_unfinished_idx on report_submissions (updated_at) where status in ('queued', 'submitted')");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists report_submissions_unfinished_idx');
  await knex.raw('drop index if exists deliveries_unfinished_idx');
}
