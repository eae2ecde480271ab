import type { Knex } from 'knex';

/**
 * U30 submissions whose upload outcome is unknown (docs/reports.md, "Outcome unknown"):
 * - outcome_unknown: the live file may or may not have reached FinanzOnline (the worker died or the
 *   connection dropped after the upload left). Status stays `submitted`; the flag says the job has
 *   given up and an admin must check the DataBox and resolve the row to accepted or rejected.
 * - resolved_by / resolved_at / resolution_note: who resolved it by hand, when, and why. Kept apart
 *   from portal_response, which is only ever what the portal itself answered.
 *
 * Overlapping live periods (a month inside a filed quarter) are refused by submitVatReturn under a
 * per-tenant advisory lock; report_submissions_live_unique (20261122150000) stays as the last guard
 * for the same label.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('report_submissions', (t) => {
    t.boolean('outcome_unknown').notNullable().defaultTo(false);
    t.uuid('resolved_by');
    t.timestamp('resolved_at', { useTz: true });
    t.text('resolution_note');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('report_submissions', (t) => {
    t.dropColumn('resolution_note');
    t.dropColumn('resolved_at');
    t.dropColumn('resolved_by');
    t.dropColumn('outcome_unknown');
  });
}
