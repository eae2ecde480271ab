import type { Knex } from 'knex';

/**
 * U30 submissions whose upload outcome is unknown (docs/reports.md, "Outcome unknown"):
 * outcome_unknown marks a `submitted` row the job gave up on, for an admin to resolve from the
 * DataBox; resolved_by/_at/resolution_note record that, apart from portal_response (only ever the
 * portal's own answer).
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
