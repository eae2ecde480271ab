import type { Knex } from 'knex';

/**
 * Incoming e-invoices as they were received (docs/e-invoicing-inbound.md, "Inbound API"). The
 * original bytes are kept unchanged for the retention period (GoBD, BAO § 132): the file is the
 * invoice, the booked eingangsrechnung is what we read from it.
 * Same-file uploads are found by sha256 at insert (a plain index: the second upload is a row of
 * its own with status duplicate, so there is no unique constraint on the hash).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('incoming_einvoices', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.text('status').notNullable().defaultTo('queued');
    t.text('format');
    t.text('syntax');
    t.text('profile');
    t.uuid('invoice_id').references('id').inTable('invoices');
    // The earlier upload of the same file (same tenant and sha256).
    t.uuid('duplicate_of').references('id').inTable('incoming_einvoices');
    t.jsonb('errors').notNullable().defaultTo('[]');
    t.jsonb('warnings').notNullable().defaultTo('[]');
    t.boolean('valid');
    t.binary('original').notNullable();
    t.text('media_type').notNullable();
    t.text('sha256').notNullable();
    t.integer('size').notNullable();
    t.uuid('supplier_id_hint');
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('processed_at', { useTz: true });
    t.index(['tenant_id', 'sha256']);
    t.index(['tenant_id', 'status', 'received_at']);
  });
  await knex.raw(`
    alter table incoming_einvoices
      add constraint incoming_einvoices_status_check check (status in ('queued', 'processing', 'imported', 'duplicate', 'rejected'))
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('incoming_einvoices');
}
