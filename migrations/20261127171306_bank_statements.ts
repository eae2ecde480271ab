import type { Knex } from 'knex';

/**
 * Bank statement import and matching (docs/bank-statements.md). A statement file is stored as
 * received and read by a job; each booked entry becomes one bank_transactions row, once per tenant
 * (unique dedup_key: overlapping statements and a job that runs twice add nothing). A transaction
 * pays at most one invoice through one payment (unique payment_id).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('bank_statements', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.text('status').notNullable().defaultTo('queued');
    t.text('format');
    t.text('statement_ref');
    t.text('account');
    t.text('account_iban');
    t.text('currency');
    t.text('error');
    t.jsonb('warnings').notNullable().defaultTo('[]');
    t.jsonb('flags').notNullable().defaultTo('[]');
    t.integer('entries').notNullable().defaultTo(0);
    t.integer('new_entries').notNullable().defaultTo(0);
    t.integer('duplicates').notNullable().defaultTo(0);
    t.binary('original').notNullable();
    t.text('media_type').notNullable();
    t.text('sha256').notNullable();
    t.integer('size').notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('processed_at', { useTz: true });
    t.index(['tenant_id', 'received_at']);
  });
  await knex.raw(`
    alter table bank_statements
      add constraint bank_statements_status_check check (status in ('queued', 'processing', 'imported', 'rejected'))
  `);

  await knex.schema.createTable('bank_transactions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    // The statement that brought the entry first; later statements that list it again count it as a duplicate.
    t.uuid('statement_id').notNullable().references('id').inTable('bank_statements').onDelete('CASCADE');
    t.text('dedup_key').notNullable();
    t.text('account').notNullable();
    t.date('booking_date').notNullable();
    t.date('value_date');
    t.decimal('amount', 14, 2).notNullable();
    t.text('direction').notNullable();
    t.text('currency').notNullable();
    t.boolean('reversal').notNullable().defaultTo(false);
    t.text('counterparty_name');
    t.text('counterparty_iban');
    t.text('remittance');
    t.text('creditor_reference');
    t.text('end_to_end_id');
    t.text('entry_reference');
    t.text('bank_text');
    t.text('status').notNullable().defaultTo('unmatched');
    t.jsonb('flags').notNullable().defaultTo('[]');
    // Why the automatic matching left it unmatched, or what it noticed (an overpayment).
    t.text('note');
    t.uuid('invoice_id').references('id').inTable('invoices');
    t.uuid('payment_id').references('id').inTable('payments');
    t.decimal('matched_amount', 14, 2);
    t.text('match_rule');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['tenant_id', 'dedup_key']);
    t.unique(['payment_id']);
    t.index(['tenant_id', 'status', 'booking_date']);
    t.index(['tenant_id', 'statement_id']);
    t.index(['tenant_id', 'counterparty_iban']);
  });
  await knex.raw(`
    alter table bank_transactions
      add constraint bank_transactions_amount_check check (amount > 0),
      add constraint bank_transactions_direction_check check (direction in ('credit', 'debit')),
      add constraint bank_transactions_status_check check (status in ('unmatched', 'matched', 'ignored')),
      add constraint bank_transactions_match_check check ((status = 'matched') = (payment_id is not null and invoice_id is not null))
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('bank_transactions');
  await knex.schema.dropTableIfExists('bank_statements');
}
