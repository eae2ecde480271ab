import type { Knex } from 'knex';
import { chartForCountry, CHARTS, type Chart, type ChartName } from '../domain/charts';

export interface LedgerAccountRow {
  id: string;
  tenantId: string;
  number: string;
  name: string;
  kind: string;
  chart: string;
}

/**
 * Seed the tenant's chart (by its country) idempotently: existing numbers are kept as they are,
 * so a re-install or a concurrent seed never duplicates or overwrites an account.
 */
export async function seedChartOfAccounts(trx: Knex | Knex.Transaction, tenantId: string, country: string | null): Promise<Chart> {
  const existing = await trx('ledgerAccounts').where({ tenantId }).first('chart');
  const chart = existing && existing.chart in CHARTS ? CHARTS[existing.chart as ChartName] : chartForCountry(country);
  await trx('ledgerAccounts')
    .insert(chart.accounts.map((a) => ({ tenantId, number: a.number, name: a.name, kind: a.kind, chart: chart.name })))
    .onConflict(['tenantId', 'number'])
    .ignore();
  return chart;
}

/**
 * The chart a tenant's ledger was seeded with, seeding it on first use. Posting calls this for
 * every entry, so an existing ledger costs one lookup (connector install re-seeds in full, which
 * adds accounts a newer chart version introduced).
 */
export async function tenantChart(trx: Knex.Transaction, tenantId: string): Promise<Chart> {
  const existing = await trx('ledgerAccounts').where({ tenantId }).first('chart');
  if (existing && existing.chart in CHARTS) return CHARTS[existing.chart as ChartName];
  const tenant = await trx('tenants').where({ id: tenantId }).first('country');
  return seedChartOfAccounts(trx, tenantId, tenant?.country ?? null);
}

export async function findAccount(trx: Knex | Knex.Transaction, tenantId: string, number: string): Promise<LedgerAccountRow | undefined> {
  return trx('ledgerAccounts').where({ tenantId, number }).first();
}
