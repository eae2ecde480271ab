import type { Knex } from 'knex';

/**
 * Password-reset requests (docs/auth.md, "Password reset"). One row per POST
 * /api/auth/password/forgot, also for an e-mail without an active account (tenant and user null):
 * both paths do the same writes, so neither the answer nor its timing tells them apart. Only the
 * token's SHA-256 is stored; the token itself is derived from the row id with a server key, so
 * the e-mail job carries the id alone and a retried job sends the same link. A row is deleted when
 * its token is used (single use) and the user's rows go with it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('password_resets', (t) => {
    t.uuid('id').primary();
    t.uuid('tenant_id').references('tenants.id').onDelete('CASCADE');
    t.uuid('user_id').references('users.id').onDelete('CASCADE');
    t.text('token_hash').notNullable().unique();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'user_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('password_resets');
}
