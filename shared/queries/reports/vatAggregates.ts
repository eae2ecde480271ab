import type { Knex } from 'knex';
import type { TaxPeriod } from '../../domain/tax/period';
import type { VatAggregates } from '../../domain/tax/u30';
import { D, type Dec, money } from '../../domain/tax/amounts';
import { EU_COUNTRIES, EU_VAT_ID_PREFIXES, vatPrefixOf } from '../../domain/vatId';
import { inBooksSql } from './books';

/**
 * The SQL side of the VAT returns (U30, UStVA) and the BWA: GROUP BY in PostgreSQL over one
 * tenant and date range, never invoices in memory. Sales are finalized rechnung − gutschrift by
 * issueDate (a cancelled invoice still counts; its credit note reverses it), input tax the
 * incoming invoices not entwurf/storniert by invoiceDate. Each line counts under its stored VAT
 * category; legacy lines without one are inferred from the customer snapshot as before
 * (docs/reports.md, "What counts, and by which date"; docs/tax-reports.md; books: books.ts).
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

/**
 * SQL: a sales line's VAT situation. The stored category wins; a legacy line without one is
 * inferred as the reports always did (rate > 0 standard, 0 % reverse charge by the buyer's VAT ID,
 * export by the buyer's country), else null = unclassified (bindings: REVERSE_CHARGE_SQL's, then
 * EXPORT_SQL's).
 */
export const SALES_CATEGORY_SQL = `coalesce(ii.tax_category, case when ii.tax_rate > 0 then 'standard'
                                          when ${REVERSE_CHARGE_SQL} then 'reverseCharge'
                                          when ${EXPORT_SQL} then 'export' end)`;
export const salesCategoryBindings = (country: string) => [EU_VAT_PREFIXES, vatPrefixOf(country), ...exportBindings(country)];

/** Signed net of a sales line: credit notes reverse. */
/** A sales line's net with its document's sign: a credit note (gutschrift) reduces the sales. */
export const SIGNED_NET_SQL = "(case when i.type = 'gutschrift' then -ii.net_amount else ii.net_amount end)";

/**
 * SQL: invoice `i` is a finalized sale (rechnung or gutschrift) in the books, issued in the period;
 * bind salesInPeriodBindings. The VAT return and the ZM select their lines with it.
 */
export const SALES_IN_PERIOD_SQL = `i.tenant_id = ?
                and i.type in ('rechnung', 'gutschrift')
                and i.status = any(?::text[])
                and ${inBooksSql('i')}
                and i.issue_date between ? and ?`;
export const salesInPeriodBindings = (tenantId: string, from: string, to: string) => [tenantId, [...FINALIZED_STATUSES], from, to];

export interface SalesCategoryRow {
  category: string | null;
  exemptionReason: string | null;
  taxRate: string;
  net: string;
}

/**
 * SQL: an amount of invoice `i` in EUR. A foreign-currency document converts with its stored rate
 * (units per EUR: amount / rate, half away from zero to the cent, as toEur in
 * shared/domain/exchangeRates.ts and PostgreSQL's round do). Without a stored rate the result is
 * null, which is why the report routes first refuse such documents (422 FOREIGN_CURRENCY).
 */
export const eurSql = (amount: string) => `(case when i.currency = 'EUR' then ${amount} else round(${amount} / i.exchange_rate, 2) end)`;

/**
 * SQL for grouped sums: group by DOC_GROUP_SQL too, and take eurSumSql(x) instead of sum(x). A
 * foreign-currency document is its own group, so its sum converts once, as its EUR VAT statement
 * does; all EUR documents share one group, so the EUR path groups no finer than by category and rate.
 */
export const DOC_GROUP_SQL = "(case when i.currency = 'EUR' then null else i.id end)";
export const eurSumSql = (amount: string) => `(case when min(i.currency) = 'EUR' then sum(${amount}) else round(sum(${amount}) / min(i.exchange_rate), 2) end)`;

/**
 * The period's sales by (category, exemption reason, rate). Hand-written GROUP BY over the period's
 * lines, foreign-currency documents converted one by one (DOC_GROUP_SQL).
 */
export async function salesByCategory(db: Knex, tenantId: string, country: string, from: string, to: string): Promise<SalesCategoryRow[]> {
  const { rows } = await db.raw(
    `select d."category", d."exemptionReason", d."taxRate", sum(d.net)::text as "net"
       from (select ${SALES_CATEGORY_SQL} as "category",
                    ii.exemption_reason as "exemptionReason",
                    ii.tax_rate::text as "taxRate",
                    ${eurSumSql(SIGNED_NET_SQL)} as net
               from invoices i
               join invoice_items ii on ii.invoice_id = i.id
              where ${SALES_IN_PERIOD_SQL}
              group by ${DOC_GROUP_SQL}, 1, 2, 3) d
      group by 1, 2, 3
      order by 3 desc, 1, 2`,
    [...salesCategoryBindings(country), ...salesInPeriodBindings(tenantId, from, to)],
  );
  return rows as SalesCategoryRow[];
}

/**
 * SQL: the tax of invoice `i`'s foreign VAT lines (another country's VAT, docs/vat-categories.md,
 * "Foreign VAT"), 0 without; deductible only through the refund procedure, not in our return.
 */
export const FOREIGN_VAT_TAX_SQL =
  "coalesce((select sum(fv.tax_amount) from invoice_items fv where fv.invoice_id = i.id and fv.tax_category = 'foreignVat'), 0)";

/** The period's input tax: the incoming invoices' tax without their foreign VAT. */
export async function inputTax(db: Knex, tenantId: string, from: string, to: string): Promise<string> {
  const { rows } = await db.raw(
    `select coalesce(sum(${eurSql(`(i.total_tax - ${FOREIGN_VAT_TAX_SQL})`)}), 0)::text as "inputTax"
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

/**
 * Net of the period's incoming lines where the tenant owes the VAT: reverseCharge (services from
 * another member state) and intraCommunitySupply (on an incoming invoice: an intra-Community
 * acquisition of goods). Same selection and date as inputTax.
 */
export async function purchasesOwingTax(db: Knex, tenantId: string, from: string, to: string): Promise<{ reverseChargeNet: string; acquisitionNet: string }> {
  const { rows } = await db.raw(
    `select coalesce(sum(d.net) filter (where d.category = 'reverseCharge'), 0)::text as "reverseChargeNet",
            coalesce(sum(d.net) filter (where d.category = 'intraCommunitySupply'), 0)::text as "acquisitionNet"
       from (select ii.tax_category as category, ${eurSumSql('ii.net_amount')} as net
       from invoices i
       join invoice_items ii on ii.invoice_id = i.id
      where i.tenant_id = ?
        and i.type = 'eingangsrechnung'
        and ${inBooksSql('i')}
        and i.status <> all(?::text[])
        and i.invoice_date between ? and ?
        and ii.tax_category in ('reverseCharge', 'intraCommunitySupply')
      group by ${DOC_GROUP_SQL}, 1) d`,
    [tenantId, [...INPUT_TAX_EXCLUDED_STATUSES], from, to],
  );
  return rows[0] as { reverseChargeNet: string; acquisitionNet: string };
}

/**
 * The rate a tenant owes on reverse-charge purchases and acquisitions: its country's standard
 * rate. The incoming line's own rate is 0 by rule (the supplier charges none), so it cannot say
 * otherwise; reduced-rate acquisitions are not expressible yet (docs/tax-reports.md).
 */
export const STANDARD_RATE: Record<string, string> = { AT: '20', DE: '19' };

/** Exemption codes with their own U30 Kennzahl: land (KZ 019); the small-business codes (KZ 016). */
const LAND_EXEMPTIONS = new Set(['AT-6-1-9a']);
const SMALL_BUSINESS_EXEMPTIONS = new Set(['AT-6-1-27', 'DE-19']);

export interface TenantTaxFacts {
  id: string;
  country: string;
  settings?: { smallBusiness?: unknown } | null;
}

/** The aggregates computeU30 / computeUstvaDe take, for one tenant and period. */
export async function loadVatAggregates(db: Knex, tenant: TenantTaxFacts, period: TaxPeriod): Promise<VatAggregates> {
  const [sales, tax, purchases] = await Promise.all([
    salesByCategory(db, tenant.id, tenant.country, period.start, period.end),
    inputTax(db, tenant.id, period.start, period.end),
    purchasesOwingTax(db, tenant.id, period.start, period.end),
  ]);
  const sums = { reverseCharge: new D(0), intraCommunitySupply: new D(0), export: new D(0), zeroRated: new D(0), notSubject: new D(0) };
  const exempt = { small: new D(0), land: new D(0), other: new D(0) };
  const byRate = new Map<string, Dec>();
  for (const r of sales) {
    const rate = new D(r.taxRate).toString();
    byRate.set(rate, (byRate.get(rate) ?? new D(0)).plus(r.net));
    if (r.category === 'exempt') {
      const code = r.exemptionReason ?? '';
      const part = SMALL_BUSINESS_EXEMPTIONS.has(code) ? 'small' : LAND_EXEMPTIONS.has(code) ? 'land' : 'other';
      exempt[part] = exempt[part].plus(r.net);
    } else if (r.category && r.category in sums) {
      const k = r.category as keyof typeof sums;
      sums[k] = sums[k].plus(r.net);
    }
  }
  return {
    salesByRate: [...byRate].map(([taxRate, net]) => ({ taxRate, net: money(net) })),
    reverseChargeEuNet: money(sums.reverseCharge),
    intraCommunitySupplyNet: money(sums.intraCommunitySupply),
    exportNet: money(sums.export),
    zeroRatedNet: money(sums.zeroRated),
    notSubjectNet: money(sums.notSubject),
    exemptSmallBusinessNet: money(exempt.small),
    exemptLandNet: money(exempt.land),
    exemptOtherNet: money(exempt.other),
    inputTax: tax,
    smallBusiness: !!tenant.settings?.smallBusiness,
    purchaseReverseChargeNet: purchases.reverseChargeNet,
    purchaseAcquisitionNet: purchases.acquisitionNet,
    purchaseTaxRate: STANDARD_RATE[tenant.country] ?? '0',
  };
}
