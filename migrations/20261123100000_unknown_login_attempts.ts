import type { Knex } from 'knex';

/**
 * Lockout counters for e-mails that have no active account. Without them an unknown e-mail
 * answers 401 forever while a real one answers 429 after five failures, which tells an attacker
 * which addresses exist. Keyed by a SHA-256 of the normalised e-mail, so the table is not a list
 * of the addresses people tried. Not tenant-owned: there is no tenant behind an unknown e-mail.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('unknown_login_attempts', (t) => {
    t.text('email_hash').primary();
    t.integer('failed_login_count').notNullable().defaultTo(0);
    t.integer('lockout_count').notNullable().defaultTo(0);
    t.timestamp('locked_until', { useTz: true });
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['updated_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('unknown_login_attempts');
}
