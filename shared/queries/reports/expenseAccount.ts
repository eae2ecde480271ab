import { DATEV_CHARTS, type DatevChart } from '../../domain/tax/datevMapping';
import { INVOICE_SOURCE } from '../../ledger/posting';
import { CHARTS, type ChartName } from '../../domain/charts';

/**
 * The expense account of an incoming invoice in the DATEV export and the BWA: the one the general
 * ledger uses, so advisor import, BWA and ledger agree. Posted: the entry's expense line (when the
 * ledger keeps the export's chart). Not posted: connector setting, supplier default, chart
 * default; the ledger's "most used" guess is not replayed, it depends on posting order
 * (docs/reports.md, "DATEV Buchungsstapel"). Expects the invoice as `i`; inlined constants are checked.
 */
export interface ExpenseAccountSql {
  /** LEFT JOINs to append after `from invoices i`. */
  joins: string;
  /** The account number (text). */
  account: string;
  /** Where it came from: journal | connector | supplier | default. */
  source: string;
}

/**
 * SQL: a lateral join aliased `alias` giving the number of the account of the invoice `i`'s posted
 * journal entry whose line matches `lineWhere` (over `a`, the ledger account, and `jl`, the line),
 * in the export's chart; the first by `orderBy`.
 */
function postedAccountJoin(alias: string, chart: DatevChart, lineWhere: string, orderBy: string): string {
  return `left join lateral (
      select a.number
        from journal_entries je
        join journal_lines jl on jl.entry_id = je.id and jl.tenant_id = je.tenant_id
        join ledger_accounts a on a.id = jl.account_id and a.tenant_id = je.tenant_id
       where ${lineWhere} and je.tenant_id = i.tenant_id and je.source_type = '${INVOICE_SOURCE}' and je.source_id = i.id
         and a.chart = '${chart}'
       order by ${orderBy}
       limit 1
    ) ${alias} on true`;
}

export function expenseAccountSql(chart: DatevChart): ExpenseAccountSql {
  const fallback = DATEV_CHARTS[chart].expense;
  if (!/^[A-Z0-9]+$/.test(chart) || !/^\d+$/.test(fallback)) throw new Error(`unexpected chart ${chart} / account ${fallback}`);
  const joins = `
    left join suppliers s on s.id = i.supplier_id and s.tenant_id = i.tenant_id
    left join connector_installations ci on ci.tenant_id = i.tenant_id and ci.provider = i.source and ci.active
    ${postedAccountJoin('posted', chart, "a.kind = 'expense'", 'jl.debit desc, jl.credit desc')}`;
  const connector = "nullif(btrim(ci.settings->>'expenseAccount'), '')";
  const supplier = "nullif(btrim(s.default_expense_account), '')";
  return {
    joins,
    account: `coalesce(posted.number, ${connector}, ${supplier}, '${fallback}')`,
    source: `case when posted.number is not null then 'journal' when ${connector} is not null then 'connector' when ${supplier} is not null then 'supplier' else 'default' end`,
  };
}

/**
 * The account a provider's incoming invoice (one with `source`) moves money on, as the general
 * ledger books it: the posted entry's clearing line if the ledger keeps the export's chart, else
 * the connector's clearingAccount, else the ledger chart's account (SKR04 has none: null, the
 * bank). null for documents entered by hand. Expects the invoice as `i`; its join aliases
 * (clr_ci, clr_posted) can sit beside expenseAccountSql's (docs/reports.md, "DATEV Buchungsstapel").
 */
export interface ClearingAccountSql {
  joins: string;
  /** The account number (text), or null: use the bank. */
  account: string;
  /** journal | connector | default, or null. */
  source: string;
}

export function clearingAccountSql(chart: DatevChart): ClearingAccountSql {
  if (!/^[A-Z0-9]+$/.test(chart)) throw new Error(`unexpected chart ${chart}`);
  const ledgerChart = chart in CHARTS ? CHARTS[chart as ChartName] : null;
  const byProvider = ledgerChart ? Object.entries(ledgerChart.clearing) : [];
  for (const [provider, number] of byProvider)
    if (!/^[a-z]+$/.test(provider) || !/^\d+$/.test(number)) throw new Error(`unexpected clearing account ${provider} ${number}`);
  const joins = `
    left join connector_installations clr_ci on clr_ci.tenant_id = i.tenant_id and clr_ci.provider = i.source and clr_ci.active
    ${postedAccountJoin('clr_posted', chart, "i.source is not null and a.kind <> 'expense'", 'a.number')}`;
  const connector = "nullif(btrim(clr_ci.settings->>'clearingAccount'), '')";
  const chartDefault = byProvider.length ? `case i.source ${byProvider.map(([p, n]) => `when '${p}' then '${n}'`).join(' ')} end` : 'null::text';
  return {
    joins,
    account: `case when i.source is not null then coalesce(clr_posted.number, ${connector}, ${chartDefault}) end`,
    source: `case when i.source is null then null when clr_posted.number is not null then 'journal' when ${connector} is not null then 'connector' when ${chartDefault} is not null then 'default' end`,
  };
}
