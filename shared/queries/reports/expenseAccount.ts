import { DATEV_CHARTS, type DatevChart } from '../../domain/tax/datevMapping';
import { INVOICE_SOURCE } from '../../ledger/posting';
import { CHARTS, type ChartName } from '../../domain/charts';

/**
 * The expense account of an incoming invoice in the DATEV export and the BWA: the account the
 * general ledger uses (docs/ledger.md), so the advisor's import, the BWA and the ledger agree.
 *
 * 1. The invoice was posted (journal entry with source 'invoice' and this invoice's id): the
 *    entry's expense line — whatever rule chose it at posting time (connector setting, supplier,
 *    the supplier's history, chart default) and for refunds the reversed original's account.
 *    Only when the ledger keeps the same chart as the export (ledger_accounts.chart): an SKR03
 *    ledger account means nothing in an SKR04 export.
 * 2. Not posted: the ledger's rule for a new posting, as far as it is a rule: the connector's
 *    expenseAccount (invoices that came from that connector), then the supplier's default
 *    expense account, then the chart's default (DATEV_CHARTS[chart].expense, which for EKR and
 *    SKR03 is the ledger's own CHARTS[...].defaultExpense — one source of truth).
 *    The ledger's "most used on the supplier's earlier postings" guess is not replayed for
 *    unposted invoices: it depends on the order postings happen in; once the invoice is posted,
 *    step 1 reads what the guess chose.
 *
 * The SQL expects the incoming invoice as alias `i`. Chart name and default account are our own
 * constants, never user input; they are checked before being inlined.
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
 * The account the money of a provider's incoming invoice (one with `source`: a webhook payment or
 * refund) sits on, as the general ledger books it (docs/ledger.md): the provider's clearing
 * account, or the bank for a bank connector. Same order as expenseAccountSql:
 *
 * 1. The invoice was posted: the entry's other line (the clearing line: credit for a payment,
 *    debit for a refund), if the ledger keeps the export's chart.
 * 2. Not posted: the ledger's rule for a new posting (shared/ledger/posting.ts decidedAccounts):
 *    the connector's clearingAccount setting, else the ledger chart's account for the provider
 *    (CHARTS[chart].clearing, the ledger's own table). SKR04 has no ledger chart: null, and the
 *    export keeps the bank.
 *
 * null for documents without a source (entered by hand): their payments go through the bank.
 * The SQL expects the invoice as alias `i`; the joins use their own aliases (clr_ci, clr_posted),
 * so they can sit beside expenseAccountSql's.
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
