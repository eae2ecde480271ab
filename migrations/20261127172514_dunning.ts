import type { Knex } from 'knex';

/**
 * Dunning (docs/dunning.md): published base rates with their validity, the customer's business /
 * consumer flag, dunning notices (one per invoice and level, numbered per tenant and year) and the
 * link from an e-mail delivery to the notice it sends.
 *
 * The seeded base rates are the published values from 2020 on (sources in docs/dunning.md). Later
 * ones are data, not a release: `npm run base-rate -- add DE 2027-01-01 1.27` (scripts/baseRate.ts).
 */
const BASE_RATES: [country: 'AT' | 'DE', validFrom: string, rate: string][] = [
  // Deutsche Bundesbank, Basiszinssatz § 247 BGB (changes on 1 January and 1 July only).
  ['DE', '2016-07-01', '-0.88'],
  ['DE', '2023-01-01', '1.62'],
  ['DE', '2023-07-01', '3.12'],
  ['DE', '2024-01-01', '3.62'],
  ['DE', '2024-07-01', '3.37'],
  ['DE', '2025-01-01', '2.27'],
  ['DE', '2025-07-01', '1.27'],
  ['DE', '2026-01-01', '1.27'],
  // OeNB, Basiszinssatz (1. Euro-Justiz-Begleitgesetz: follows the ECB main refinancing rate, changes under 0.5 points ignored).
  ['AT', '2016-03-16', '-0.62'],
  ['AT', '2022-07-27', '-0.12'],
  ['AT', '2022-09-14', '0.63'],
  ['AT', '2022-11-02', '1.38'],
  ['AT', '2022-12-21', '1.88'],
  ['AT', '2023-02-08', '2.38'],
  ['AT', '2023-03-22', '2.88'],
  ['AT', '2023-06-21', '3.38'],
  ['AT', '2023-09-20', '3.88'],
  ['AT', '2024-09-18', '3.03'],
  ['AT', '2024-12-18', '2.53'],
  ['AT', '2025-03-12', '2.03'],
  ['AT', '2025-06-11', '1.53'],
];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('base_rates', (t) => {
    t.string('country', 2).notNullable();
    t.date('valid_from').notNullable();
    t.decimal('rate', 6, 2).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['country', 'valid_from']);
    t.check("country in ('AT', 'DE')", [], 'base_rates_country_check');
  });
  await knex('base_rates').insert(BASE_RATES.map(([country, validFrom, rate]) => ({ country, valid_from: validFrom, rate })));

  await knex.schema.alterTable('customers', (t) => {
    t.text('customer_type');
    t.check("customer_type in ('business', 'consumer')", [], 'customers_customer_type_check');
  });

  await knex.schema.createTable('dunning_number_sequences', (t) => {
    t.uuid('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.integer('year').notNullable();
    t.integer('last_value').notNullable();
    t.primary(['tenant_id', 'year']);
  });

  await knex.schema.createTable('dunning_notices', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.uuid('invoice_id').notNullable().references('id').inTable('invoices').onDelete('CASCADE');
    t.integer('level').notNullable();
    t.text('number').notNullable();
    t.date('issue_date').notNullable();
    t.timestamp('issued_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.decimal('amount_due', 14, 2).notNullable();
    t.decimal('fee', 14, 2).notNullable();
    t.decimal('interest', 14, 2).notNullable();
    t.decimal('total_due', 14, 2).notNullable();
    t.boolean('lump_sum_charged').notNullable().defaultTo(false);
    t.date('interest_from');
    t.date('interest_to');
    // Everything the PDF shows (open items, interest periods, parties), frozen when issued.
    t.jsonb('content').notNullable();
    t.uuid('created_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Never the same level twice for an invoice, whoever races (two workers, a click and the daily run).
    t.unique(['invoice_id', 'level'], { indexName: 'dunning_notices_invoice_level_unique' });
    t.unique(['tenant_id', 'number'], { indexName: 'dunning_notices_tenant_number_unique' });
    t.check('level between 1 and 3', [], 'dunning_notices_level_check');
  });

  await knex.schema.alterTable('deliveries', (t) => {
    t.uuid('dunning_notice_id').references('id').inTable('dunning_notices').onDelete('CASCADE');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('deliveries', (t) => t.dropColumn('dunning_notice_id'));
  await knex.schema.dropTableIfExists('dunning_notices');
  await knex.schema.dropTableIfExists('dunning_number_sequences');
  await knex.schema.alterTable('customers', (t) => {
    t.dropChecks(['customers_customer_type_check']);
    t.dropColumn('customer_type');
  });
  await knex.schema.dropTableIfExists('base_rates');
}
