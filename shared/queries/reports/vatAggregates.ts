import type { Knex } from 'knex';
import type { TaxPeriod } from '../../domain/tax/period';
import type { VatAggregates } from '../../domain/tax/u30';
import { D, money } from '../../domain/tax/amounts';
import { EU_COUNTRIES, EU_VAT_ID_PREFIXES, vatPrefixOf } from '../../domain/vatId';
import { inBooksSql } from './books';

/**
 * The SQL side of the VAT returns (U30, UStVA) and the BWA: GROUP BY in PostgreSQL over one
 * tenant and date range, never invoices in memory. Sales are finalized rechnung − gutschrift by
 * issueDate (a cancelled invoice still counts; its credit note reverses it), input tax the
 * incoming invoices not entwurf/storniert by invoiceDate; reverse charge and exports are read
 * from the customer snapshot (docs/reports.md, "What counts, and by which date"; books: books.ts).
 */
export const FINALIZED_STATUSES = ['offen', 'teilbezahlt', 'bezahlt', 'storniert'] as const;
export const INPUT_TAX_EXCLUDED_STATUSES = ['entwurf', 'storniert'] as const;

/** VAT ID prefixes of the EU member states (Greece is EL; XI = Northern Ireland for goods). */
export const EU_VAT_PREFIXES = [...EU_VAT_ID_PREFIXES, 'XI'];

export { vatPrefixOf };

/** SQL: the customer snapshot's VAT ID prefix is another EU state's (bindings: prefixes[], own prefix). */
export const REVERSE_CHARGE_SQL =
  "upper(left(regexp_replace(coalesce(i.customer_snapshot->>'vatId', ''), '[^A-Za-z0-9]', '', 'g'), 2)) = any(?::text[]) " +
  "and upper(left(regexp_replace(coalesce(i.customer_snapshot->>'vatId', ''), '[^A-Za-z0-9]', '', 'g'), 2)) <> ?";

/**
 * SQL: a 0 % sale that is an export — the customer snapshot's country is a country code outside
 * the EU, and the sale is not reverse charge (bindings: EU country codes[], then REVERSE_CHARGE_SQL's).
 */
export const EXPORT_SQL =
  "upper(coalesce(i.customer_snapshot->>'country', '')) ~ '^[A-Z]{2}$' and upper(i.customer_snapshot->>'country') <> all(?::text[]) " +
  `and not coalesce(${REVERSE_CHARGE_SQL}, false)`;

export const exportBindings = (country: string) => [[...EU_COUNTRIES], EU_VAT_PREFIXES, vatPrefixOf(country)];

export interface SalesRateRow {
  taxRate: string;
  net: string;
  reverseChargeNet: string;
  exportNet: string;
}

export async function salesByRate(db: Knex, tenantId: string, country: string, from: string, to: string): Promise<SalesRateRow[]> {
  const { rows } = await db.raw(
    `select ii.tax_rate::text as "taxRate",
            sum(case when i.type = 'gutschrift' then -ii.net_amount else ii.net_amount end)::text as "net",
            coalesce(sum(case when ii.tax_rate = 0 and ${REVERSE_CHARGE_SQL}
                              then (case when i.type = 'gutschrift' then -ii.net_amount else ii.net_amount end) end), 0)::text as "reverseChargeNet",
            coalesce(sum(case when ii.tax_rate = 0 and ${EXPORT_SQL}
                              then (case when i.type = 'gutschrift' then -ii.net_amount else ii.net_amount end) end), 0)::text as "exportNet"
       from invoices i
       join invoice_items ii on ii.invoice_id = i.id
      where i.tenant_id = ?
        and i.type in ('rechnung', 'gutschrift')
        and i.status = any(?::text[])
        and ${inBooksSql('i')}
        and i.issue_date between ? and ?
      group by ii.tax_rate
      order by ii.tax_rate desc`,
    [EU_VAT_PREFIXES, vatPrefixOf(country), ...exportBindings(country), tenantId, [...FINALIZED_STATUSES], from, to],
  );
  return rows as SalesRateRow[];
}

export async function inputTax(db: Knex, tenantId: string, from: string, to: string): Promise<string> {
  const { rows } = await db.raw(
    `select coalesce(sum(i.total_tax), 0)::text as "inputTax"
       from invoices i
      where i.tenant_id = ?
        and i.type = 'eingangsrechnung'
        and ${inBooksSql('i')}
        and i.status <> all(?::text[])
        and i.invoice_date between ? and ?`,
    [tenantId, [...INPUT_TAX_EXCLUDED_STATUSES], from, to],
  );
  return rows[0].inputTax as string;
}

/** The aggregates computeU30 / computeUstvaDe take, for one tenant and period. */
export async function loadVatAggregates(db: Knex, tenant: { id: string; country: string }, period: TaxPeriod): Promise<VatAggregates> {
  const [sales, tax] = await Promise.all([
    salesByRate(db, tenant.id, tenant.country, period.start, period.end),
    inputTax(db, tenant.id, period.start, period.end),
  ]);
  const rc = sales.reduce((s, r) => s.plus(r.reverseChargeNet), new D(0));
  const exports = sales.reduce((s, r) => s.plus(r.exportNet), new D(0));
  return {
    salesByRate: sales.map((r) => ({ taxRate: r.taxRate, net: r.net })),
    reverseChargeEuNet: money(rc),
    exportNet: money(exports),
    inputTax: tax,
  };
}
