import type { Knex } from 'knex';

/**
 * API keys (docs/auth.md, "API keys"): a key belongs to its tenant, not to the user who made it,
 * so an integration keeps working when that person leaves. Only a SHA-256 of the 256-bit secret is
 * stored; `public_id` is the short, non-secret part of the key that finds the row in one index
 * lookup. Revoked keys stay (revoked_at) for the audit trail and the list.
 * audit_log.actor_api_key_id names the key that acted (actor_user_id is null then).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('role').notNullable();
    t.text('public_id').notNullable().unique();
    t.text('secret_hash').notNullable();
    t.uuid('created_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.uuid('revoked_by');
    t.timestamp('last_used_at', { useTz: true });
    t.index(['tenant_id', 'created_at']);
  });
  await knex.raw("alter table api_keys add constraint api_keys_role_check check (role in ('admin', 'manager', 'member', 'viewer'))");
  await knex.raw('alter table audit_log add column actor_api_key_id uuid');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table audit_log drop column if exists actor_api_key_id');
  await knex.schema.dropTableIfExists('api_keys');
}
