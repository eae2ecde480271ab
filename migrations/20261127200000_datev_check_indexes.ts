import type { Knex } from 'knex';

/**
 * The DATEV download's checks before the first byte as index lookups instead of scans of the
 * period (docs/reports.md, "DATEV Buchungsstapel"; docs/benchmarks.md, "DATEV: checks by index"):
 * - invoices_tax_rates_idx: each invoice's tax rates as one jsonb array, per tenant. A tenant has
 *   a few distinct rate combinations; the rates check walks them (a skip scan, a few index
 *   probes) and reads only the invoices of a combination the chart lacks a rate of, where it
 *   scanned every invoice of the period (~100 ms of PostgreSQL per quarter at 100,000 invoices).
 * - invoices_unconverted_idx: documents not in EUR without an exchange rate (almost none), so
 *   the currency check of every report (currency.ts) starts from them and not from the period.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw("create index invoices_tax_rates_idx on invoices (tenant_id, (jsonb_path_query_array(tax_breakdown, '$[*].taxRate')))");
  await knex.raw("create index invoices_unconverted_idx on invoices (tenant_id) where currency <> 'EUR' and exchange_rate is null");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists invoices_unconverted_idx');
  await knex.raw('drop index if exists invoices_tax_rates_idx');
}
