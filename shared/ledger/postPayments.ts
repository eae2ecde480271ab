import type { Knex } from 'knex';
import { runCompiledSql } from '../db';
import { dec, fmtMoney } from '../domain/money';
import type { ProviderSlug } from '../providers/payments/types';
import { CHART_FALLBACKS, INVOICE_SOURCE, type PostedEntry, type PostingSettings } from './posting';

/** A provider's payment notice to post (a new incoming invoice without purchase-tax lines, in EUR). */
export interface PaymentToPost {
  tenantId: string;
  supplierId: string;
  invoiceId: string;
  invoiceDate: string;
  totalGross: string;
  provider: ProviderSlug;
  settings: PostingSettings;
  description: string;
}

/**
 * Posted: the entry as postIncomingInvoice returns it. Not posted (no chart yet, an account
 * missing, the invoice posted already): null, nothing of it written; the caller posts it alone
 * (postIncomingInvoice), which seeds the chart or names the missing account exactly as always.
 */
export type PaymentPosting = PostedEntry | null;

/**
 * The entries of several payment notices in ONE statement: for each, what postIncomingInvoice
 * (provider credit, no input tax, no purchase tax) writes, with its accounts picked as
 * decidedAccounts picks them (settings, supplier default, supplier history, chart default;
 * clearing from settings or the chart) and locked FOR SHARE, the entry and its two lines.
 *
 * One difference the statement cannot see: the history (supplier_expense_usage, kept by a trigger)
 * of a row is read before the statement's own lines count. The caller's rows of one supplier share
 * their posting settings (bookPlainPayments), and then the account is the same either way: the
 * history's pick is the account its posting increments, so it stays the pick, and a supplier
 * without history gets the chart default, which (an expense account) its first line makes its
 * history. Only the reason differs: the one-by-one path says "history" from the second row on,
 * and so does this (relabelled below), so every outcome is the one-by-one path's.
 */
export async function postPayments(trx: Knex.Transaction, rows: readonly PaymentToPost[]): Promise<PaymentPosting[]> {
  if (!rows.length) return [];
  const payload = rows.map((r, i) => ({
    ord: i,
    tenant_id: r.tenantId,
    supplier_id: r.supplierId,
    invoice_id: r.invoiceId,
    date: r.invoiceDate,
    description: r.description.slice(0, 500),
    provider: r.provider,
    settings_expense: r.settings.expenseAccount || null,
    settings_clearing: r.settings.clearingAccount || null,
    amount: fmtMoney(dec(r.totalGross).abs()),
  }));
  type Row = {
    ord: number;
    complete: boolean;
    id: string | null;
    debit: string | null;
    credit: string | null;
    source: PostedEntry['expenseSource'];
    debitKind: string | null;
  };
  const found = await runCompiledSql<Row>(trx, POST_PAYMENTS, [JSON.stringify(payload), CHART_FALLBACKS, CHART_FALLBACKS]);
  const byOrd = new Map(found.map((f) => [Number(f.ord), f]));
  // Per supplier: whether an earlier row's line on an expense account made the history (see above).
  const historyMade = new Set<string>();
  return rows.map((r, i) => {
    const f = byOrd.get(i);
    if (!f?.id || !f.complete || !f.debit || !f.credit) return null;
    const supplier = `${r.tenantId}:${r.supplierId}`;
    const source = f.source === 'default' && historyMade.has(supplier) ? 'history' : f.source;
    if ((f.source === 'default' || f.source === 'history') && f.debitKind === 'expense') historyMade.add(supplier);
    return { entryId: f.id, debitAccount: f.debit, creditAccount: f.credit, amount: payload[i].amount, reversesEntryId: null, expenseSource: source };
  });
}

/**
 * postEntry's statement (posting.ts) for many rows: `v` the rows, `x` what decidedAccounts reads
 * per row (chart, supplier default, history only when neither settings nor supplier decide; each
 * `offset 0` as there), `pick` the accounts, `acc` them locked, then the entries (only for rows
 * whose accounts all exist; once per source) and their lines. Bindings: rows, chart fallbacks twice.
 */
const POST_PAYMENTS = `with v as (
    select * from jsonb_to_recordset(cast(? as jsonb)) as v(ord int, tenant_id uuid, supplier_id uuid, invoice_id uuid, date date, description text,
                                                          provider text, settings_expense text, settings_clearing text, amount numeric)
  ), x as (
    select v.*, c.chart, c.supplier_default,
           case when c.supplier_default is null and v.settings_expense is null then (
             select u.account_number from supplier_expense_usage u
              where u.tenant_id = v.tenant_id and u.supplier_id = v.supplier_id
              order by u.uses desc, u.last_used_at desc, u.account_number
              limit 1) end as history
      from v cross join lateral (
        select (select chart from ledger_accounts where tenant_id = v.tenant_id limit 1) as chart,
               (select a.number from (select tenant_id, default_expense_account from suppliers where id = v.supplier_id offset 0) s
                  join ledger_accounts a on a.tenant_id = s.tenant_id and a.number = s.default_expense_account
                 where s.tenant_id = v.tenant_id) as supplier_default
        offset 0) c
  ), pick as (
    select x.ord, x.tenant_id, x.invoice_id, x.date, x.description, x.amount, x.chart,
           coalesce(x.settings_expense, x.supplier_default, x.history, cast(? as jsonb) -> x.chart ->> 'defaultExpense') as debit,
           coalesce(x.settings_clearing, cast(? as jsonb) -> x.chart -> 'clearing' ->> x.provider) as credit,
           case when x.settings_expense is not null then 'settings' when x.supplier_default is not null then 'supplier'
                when x.history is not null then 'history' else 'default' end as source
      from x
  ), acc as (
    select p.ord, a.id, a.number, a.kind
      from pick p join ledger_accounts a on a.tenant_id = p.tenant_id and a.number in (p.debit, p.credit)
       for share of a
  ), complete as (
    select p.ord,
           p.debit is not null and p.credit is not null
           and (select count(*) from acc where acc.ord = p.ord) = (case when p.debit = p.credit then 1 else 2 end) as ok
      from pick p
  ), e as (
    insert into journal_entries (tenant_id, date, description, source_type, source_id, reverses_entry_id)
    select p.tenant_id, p.date, p.description, '${INVOICE_SOURCE}', p.invoice_id, null
      from pick p join complete c on c.ord = p.ord
     where c.ok
     order by p.ord
    on conflict (tenant_id, source_type, source_id) do nothing
    returning id, tenant_id, source_id
  ), l as (
    insert into journal_lines (tenant_id, entry_id, account_id, debit, credit)
    select p.tenant_id, e.id, acc.id, y.debit, y.credit
      from e join pick p on p.tenant_id = e.tenant_id and p.invoice_id = e.source_id
      cross join lateral (values (1, p.debit, p.amount, cast('0.00' as numeric)), (2, p.credit, cast('0.00' as numeric), p.amount)) as y(side, number, debit, credit)
      join acc on acc.ord = p.ord and acc.number = y.number
     order by p.ord, y.side
  )
  select p.ord, c.ok as complete, e.id, p.debit, p.credit, p.source,
         (select acc.kind from acc where acc.ord = p.ord and acc.number = p.debit) as debit_kind
    from pick p join complete c on c.ord = p.ord
    left join e on e.tenant_id = p.tenant_id and e.source_id = p.invoice_id
   order by p.ord`;
