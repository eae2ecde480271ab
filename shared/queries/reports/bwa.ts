import type { Knex } from 'knex';
import { D, type Dec, money } from '../../domain/tax/amounts';
import { eurSql, FINALIZED_STATUSES, FOREIGN_VAT_TAX_SQL, INPUT_TAX_EXCLUDED_STATUSES } from './vatAggregates';
import { datevChartOf } from './datev';
import type { ReportTenant } from './vatReturn';
import { assertEurDocuments } from './currency';
import { expenseAccountSql } from './expenseAccount';
import { inBooksSql } from './books';
import { CHARTS, type ChartName } from '../../domain/charts';
import type { BwaBlock, BwaLine, BwaReport } from '../../domain/bwa';

/**
 * BWA (betriebswirtschaftliche Auswertung): per month and cumulated, prior year side by side, net
 * amounts (VAT is neither revenue nor expense). Expenses are grouped by the ledger's expense
 * account (expenseAccount.ts); cost of goods are the chart's material/goods accounts. Two GROUP BY
 * queries over both years; amounts in EUR (a foreign-currency document's at its stored rate, eurSql),
 * though a non-EUR document is still 422 FOREIGN_CURRENCY for now (docs/reports.md, "BWA").
 */

const COST_OF_GOODS: Record<string, [number, number]> = { SKR03: [3000, 3999], SKR04: [5000, 5999], EKR: [5000, 5999] };

function line(current: Dec, prior: Dec): BwaLine {
  const change = current.minus(prior);
  return {
    current: money(current),
    prior: money(prior),
    change: money(change),
    changePercent: prior.isZero() ? null : normalizeZero(change.dividedBy(prior.abs()).times(100).toDecimalPlaces(1, D.ROUND_HALF_UP).toFixed(1)),
  };
}
const normalizeZero = (s: string) => (s === '-0.0' ? '0.0' : s);

interface Figures {
  revenue: Dec;
  expenses: Map<string, Dec>;
}

export async function bwaReport(db: Knex, tenant: ReportTenant, year: number): Promise<BwaReport> {
  await assertEurDocuments(db, tenant.id, { from: `${year - 1}-01-01`, to: `${year}-12-31` }, `The BWA ${year} (with ${year - 1} for comparison)`);
  return bwaFigures(db, tenant, year);
}

/** The BWA's figures in EUR, without the foreign-currency gate (bwaReport runs it first). */
export async function bwaFigures(db: Knex, tenant: ReportTenant, year: number): Promise<BwaReport> {
  const priorYear = year - 1;
  const from = `${priorYear}-01-01`;
  const to = `${year}-12-31`;
  const chart = datevChartOf(tenant);
  const x = expenseAccountSql(chart);
  const cost = expenseCostSql(chart, tenant.settings?.smallBusiness === true);
  const [sales, expenses] = await Promise.all([
    db.raw(
      `select extract(year from i.issue_date)::int as "y", extract(month from i.issue_date)::int as "m",
              sum(case when i.type = 'gutschrift' then -${eurSql('i.total_net')} else ${eurSql('i.total_net')} end)::text as "net"
         from invoices i
        where i.tenant_id = ? and i.type in ('rechnung', 'gutschrift') and i.status = any(?::text[])
          and ${inBooksSql('i')} and i.issue_date between ? and ?
        group by 1, 2`,
      [tenant.id, [...FINALIZED_STATUSES], from, to],
    ),
    db.raw(
      `select extract(year from i.invoice_date)::int as "y", extract(month from i.invoice_date)::int as "m",
              ${x.account} as "account",
              sum(${eurSql(cost.amount)})::text as "net"
         from invoices i ${x.joins} ${cost.joins}
        where i.tenant_id = ? and i.type = 'eingangsrechnung' and i.status <> all(?::text[])
          and ${inBooksSql('i')} and i.invoice_date between ? and ?
        group by 1, 2, 3`,
      [tenant.id, [...INPUT_TAX_EXCLUDED_STATUSES], from, to],
    ),
  ]);

  // figures[yearIndex 0 = current, 1 = prior][month 1..12]
  const empty = (): Figures => ({ revenue: new D(0), expenses: new Map() });
  const figures = [Array.from({ length: 13 }, empty), Array.from({ length: 13 }, empty)];
  for (const r of sales.rows as Array<{ y: number; m: number; net: string }>) {
    const f = figures[r.y === year ? 0 : 1][r.m];
    f.revenue = f.revenue.plus(r.net);
  }
  const accounts = new Set<string>();
  for (const r of expenses.rows as Array<{ y: number; m: number; account: string; net: string }>) {
    accounts.add(r.account);
    const f = figures[r.y === year ? 0 : 1][r.m];
    f.expenses.set(r.account, (f.expenses.get(r.account) ?? new D(0)).plus(r.net));
  }
  const names = await accountNames(db, tenant.id, chart, [...accounts]);
  const [lo, hi] = COST_OF_GOODS[chart] ?? COST_OF_GOODS.EKR;
  const isCostOfGoods = (account: string) => /^\d+$/.test(account) && Number(account.slice(0, 4)) >= lo && Number(account.slice(0, 4)) <= hi;
  const order = [...accounts].sort((a, b) => a.localeCompare(b, 'de', { numeric: true }));
  const groupOf = (account: string) => (names.get(account) ? `${account} ${names.get(account)}` : account);

  const block = (cur: Figures, pri: Figures): BwaBlock => {
    const zero = new D(0);
    const exp = (f: Figures, g: string) => f.expenses.get(g) ?? zero;
    const sum = (f: Figures, pick: (g: string) => boolean) => order.filter(pick).reduce((s, g) => s.plus(exp(f, g)), zero);
    const cogs = (f: Figures) => sum(f, isCostOfGoods);
    const total = (f: Figures) => sum(f, () => true);
    return {
      revenue: line(cur.revenue, pri.revenue),
      costOfGoods: line(cogs(cur), cogs(pri)),
      grossProfit: line(cur.revenue.minus(cogs(cur)), pri.revenue.minus(cogs(pri))),
      expenses: order.map((a) => ({ group: groupOf(a), account: a, name: names.get(a) ?? null, ...line(exp(cur, a), exp(pri, a)) })),
      totalExpenses: line(total(cur), total(pri)),
      result: line(cur.revenue.minus(total(cur)), pri.revenue.minus(total(pri))),
    };
  };
  const add = (a: Figures, b: Figures): Figures => {
    const expenses = new Map(a.expenses);
    for (const [g, v] of b.expenses) expenses.set(g, (expenses.get(g) ?? new D(0)).plus(v));
    return { revenue: a.revenue.plus(b.revenue), expenses };
  };

  let cumCur = empty();
  let cumPri = empty();
  const months: BwaReport['months'] = [];
  for (let m = 1; m <= 12; m++) {
    cumCur = add(cumCur, figures[0][m]);
    cumPri = add(cumPri, figures[1][m]);
    months.push({ month: m, ...block(figures[0][m], figures[1][m]), cumulative: block(cumCur, cumPri) });
  }
  return { year, priorYear, currency: 'EUR', chart, months, total: block(cumCur, cumPri) };
}

/**
 * What an incoming invoice costs. Normally its net (the VAT is deducted). A small-business tenant
 * deducts no VAT (docs/vat-categories.md): the gross, plus the VAT it owes on purchases under
 * reverse charge and intra-Community acquisitions, at the standard rate on their net per kind,
 * rounded like the ledger's entry (docs/ledger.md). Expects the invoice as `i`.
 */
function expenseCostSql(chart: string, smallBusiness: boolean): { amount: string; joins: string } {
  // Foreign VAT is not deducted (docs/vat-categories.md): it is part of the cost.
  if (!smallBusiness) return { amount: `(i.total_net + ${FOREIGN_VAT_TAX_SQL})`, joins: '' };
  const rate = chart in CHARTS ? CHARTS[chart as ChartName].standardRate : '19'; // SKR04: Germany, as SKR03
  if (!/^\d+$/.test(rate)) throw new Error(`unexpected rate ${rate}`);
  return {
    amount: 'i.total_gross + coalesce(owed.tax, 0)',
    joins: `left join lateral (
        select sum(k.tax) as tax
          from (select round(sum(ii.net_amount) * ${rate} / 100, 2) as tax
                  from invoice_items ii
                 where ii.invoice_id = i.id and ii.tax_rate = 0 and ii.tax_category in ('reverseCharge', 'intraCommunitySupply')
                 group by ii.tax_category) k
      ) owed on true`,
  };
}

/**
 * Account names for the BWA lines: the tenant's own ledger accounts (an accountant may have added
 * or renamed some), else the seeded chart's name for that number. One query for a handful of rows.
 */
async function accountNames(db: Knex, tenantId: string, chart: string, numbers: string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const seeded = chart in CHARTS ? CHARTS[chart as ChartName].accounts : [];
  for (const a of seeded) if (numbers.includes(a.number)) names.set(a.number, a.name);
  if (numbers.length) {
    const rows = await db('ledgerAccounts').where({ tenantId, chart }).whereIn('number', numbers).select('number', 'name');
    for (const r of rows as Array<{ number: string; name: string }>) names.set(r.number, r.name);
  }
  return names;
}
