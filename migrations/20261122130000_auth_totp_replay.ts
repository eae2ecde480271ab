import type { Knex } from 'knex';

/**
 * TOTP replay protection: the last accepted time step per user, so a code seen once (shoulder
 * surfing, a phished page) cannot be used again within its ±1 step window.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.bigInteger('totp_last_step');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('totp_last_step');
  });
}
