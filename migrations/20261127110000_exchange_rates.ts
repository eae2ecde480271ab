import type { Knex } from 'knex';

/**
 * The ECB euro reference rates, one row per currency and publication day (docs/exchange-rates.md).
 * Public reference data shared by all tenants: no tenant_id, every tenant reads the same rows.
 * `rate` is units of the currency per 1 EUR as the ECB publishes it (a decimal, never a float);
 * the fetch job upserts on the primary key, so a re-run or a duplicate delivery writes nothing new.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('exchange_rates', (t) => {
    t.text('currency').notNullable();
    t.date('rate_date').notNullable();
    t.decimal('rate', 18, 6).notNullable();
    t.text('source').notNullable().defaultTo('ecb');
    t.timestamp('fetched_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['currency', 'rate_date']);
  });
  await knex.raw(`
    alter table exchange_rates
      add constraint exchange_rates_currency_check check (currency ~ '^[A-Z]{3}$' and currency <> 'EUR'),
      add constraint exchange_rates_rate_check check (rate > 0),
      add constraint exchange_rates_source_check check (source in ('ecb'))
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('exchange_rates');
}
