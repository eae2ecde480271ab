import type { Knex } from 'knex';
import { runPrepared } from '../db';
import { dec, fmtMoney } from '../domain/money';
import type { ProviderSlug } from '../providers/payments/types';
import { tenantChart } from './accounts';
import { CHARTS, type Chart, type ChartName } from './charts';

/**
 * Posting incoming invoices to the general ledger (docs/ledger.md). Double entry is enforced by
 * the database (a deferred trigger rejects an unbalanced entry at commit) and "once per invoice"
 * by the unique (tenant_id, source_type, source_id) on journal_entries.
 */
export const INVOICE_SOURCE = 'invoice';

export class PostingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PostingError';
  }
}

export interface PostingSettings {
  expenseAccount?: string | null;
  clearingAccount?: string | null;
}

export interface PostedEntry {
  entryId: string;
  debitAccount: string;
  creditAccount: string;
  amount: string;
  reversesEntryId: string | null;
  /** How the expense account was chosen: settings, supplier, history, chart default, or the original entry (refunds). */
  expenseSource: 'settings' | 'supplier' | 'history' | 'default' | 'original';
}

export interface InvoiceToPost {
  id: string;
  tenantId: string;
  supplierId: string;
  invoiceDate: string;
  totalGross: string;
  invoiceNumber: string;
  relatedInvoiceId?: string | null;
}

/**
 * The expense account most used on the supplier's earlier posted incoming invoices (debit side,
 * reversals excluded); ties go to the most recent. As a query of one column, so that posting can
 * ask it as a subquery of its context read.
 */
function expenseHistoryQuery(trx: Knex.Transaction, tenantId: string, supplierId: string) {
  return trx('journalEntries as je')
    .join('invoices as i', function () {
      this.on('i.id', '=', 'je.sourceId').andOn('i.tenantId', '=', 'je.tenantId');
    })
    // tenant_id in the join too: it lets the lines be found through (tenant_id, entry_id).
    .join('journalLines as jl', function () {
      this.on('jl.entryId', '=', 'je.id').andOn('jl.tenantId', '=', 'je.tenantId');
    })
    .join('ledgerAccounts as a', 'a.id', 'jl.accountId')
    .where({ 'je.tenantId': tenantId, 'je.sourceType': INVOICE_SOURCE, 'i.supplierId': supplierId, 'a.kind': 'expense' })
    .whereNull('je.reversesEntryId')
    .where('jl.debit', '>', 0)
    .groupBy('a.number')
    .select('a.number')
    .orderByRaw('count(*) desc, max(je.created_at) desc')
    .limit(1);
}

/** null when the supplier has no history. */
export async function detectExpenseFromHistory(trx: Knex.Transaction, tenantId: string, supplierId: string): Promise<string | null> {
  const row = await expenseHistoryQuery(trx, tenantId, supplierId).first();
  return (row as { number?: string } | undefined)?.number ?? null;
}

/**
 * What a posting decides its accounts from, in ONE read (it was up to four): the tenant's chart,
 * the supplier's default expense account if that account exists, and — only when neither the
 * settings nor that default decide (CASE evaluates the subquery lazily) — the supplier's history.
 * A tenant without a ledger yet gets its chart seeded (tenantChart), as before.
 */
async function postingContext(
  trx: Knex.Transaction,
  tenantId: string,
  supplierId: string,
  settingsExpense: string | null | undefined,
): Promise<{ chart: Chart; supplierDefault: string | null; history: string | null }> {
  const rows = await runPrepared(
    trx,
    trx.raw(
      `select c.chart, c.supplier_default as "supplierDefault",
              case when c.supplier_default is null and not ? then (?) end as history
         from (select (select chart from ledger_accounts where tenant_id = ? limit 1) as chart,
                      (select a.number from suppliers s join ledger_accounts a on a.tenant_id = s.tenant_id and a.number = s.default_expense_account
                        where s.tenant_id = ? and s.id = ?) as supplier_default) c`,
      [!!settingsExpense, expenseHistoryQuery(trx, tenantId, supplierId), tenantId, tenantId, supplierId],
    ),
  );
  const row = rows[0] as { chart: string | null; supplierDefault: string | null; history: string | null };
  const chart = row.chart && row.chart in CHARTS ? CHARTS[row.chart as ChartName] : await tenantChart(trx, tenantId);
  return { chart, supplierDefault: row.supplierDefault, history: row.history };
}

/**
 * The entry and its two lines in one statement, the accounts looked up by number in it and locked
 * FOR SHARE (they cannot be deleted or renumbered while the entry commits). A missing account
 * writes nothing and fails with the first missing one, debit before credit; an invoice that is
 * posted already writes nothing and gives null: never twice.
 */
async function postEntry(
  trx: Knex.Transaction,
  e: { tenantId: string; date: string; description: string; sourceId: string; reversesEntryId: string | null },
  debit: { number: string; what: string },
  credit: { number: string; what: string },
  amount: string,
): Promise<string | null> {
  const numbers = [...new Set([debit.number, credit.number])];
  const rows = await runPrepared(
    trx,
    trx.raw(
      `with acc as (
         select id, number from ledger_accounts where tenant_id = ? and number in (${numbers.map(() => '?').join(', ')}) for share
       ), complete as (
         select count(*) = ? as ok from acc
       ), e as (
         insert into journal_entries (tenant_id, date, description, source_type, source_id, reverses_entry_id)
         select cast(? as uuid), cast(? as date), cast(? as text), cast(? as text), cast(? as uuid), cast(? as uuid)
          where (select ok from complete)
         on conflict (tenant_id, source_type, source_id) do nothing
         returning id
       ), l as (
         insert into journal_lines (tenant_id, entry_id, account_id, debit, credit)
         select cast(? as uuid), e.id, acc.id, x.debit, x.credit
           from e cross join (values (cast(? as text), cast(? as numeric), cast(? as numeric)), (cast(? as text), cast(? as numeric), cast(? as numeric))) as x(number, debit, credit)
           join acc on acc.number = x.number
       )
       select (select ok from complete) as "complete", (select id from e) as "id", (select coalesce(json_agg(number), '[]') from acc) as "found"`,
      [
        e.tenantId, ...numbers, numbers.length,
        e.tenantId, e.date, e.description.slice(0, 500), INVOICE_SOURCE, e.sourceId, e.reversesEntryId,
        e.tenantId, debit.number, amount, '0.00', credit.number, '0.00', amount,
      ],
    ),
  );
  const r = rows[0] as { complete: boolean; id: string | null; found: string[] };
  if (!r.complete) {
    const missing = [debit, credit].find((w) => !r.found.includes(w.number))!;
    throw new PostingError(`${missing.what} ${missing.number} does not exist in the tenant's chart of accounts`);
  }
  return r.id ?? null;
}

/**
 * Post a paid incoming invoice: debit the expense account, credit the provider's clearing
 * account. Returns null when the invoice already has its entry.
 */
export async function postIncomingInvoice(
  trx: Knex.Transaction,
  invoice: InvoiceToPost,
  provider: ProviderSlug,
  settings: PostingSettings,
  description: string,
): Promise<PostedEntry | null> {
  const amount = fmtMoney(dec(invoice.totalGross).abs());
  const { chart, supplierDefault, history } = await postingContext(trx, invoice.tenantId, invoice.supplierId, settings.expenseAccount);

  let expenseNumber: string;
  let expenseSource: PostedEntry['expenseSource'];
  if (settings.expenseAccount) [expenseNumber, expenseSource] = [settings.expenseAccount, 'settings'];
  else if (supplierDefault) [expenseNumber, expenseSource] = [supplierDefault, 'supplier'];
  else if (history) [expenseNumber, expenseSource] = [history, 'history'];
  else [expenseNumber, expenseSource] = [chart.defaultExpense, 'default'];
  const clearingNumber = settings.clearingAccount || chart.clearing[provider];

  const entryId = await postEntry(
    trx,
    { tenantId: invoice.tenantId, date: invoice.invoiceDate, description, sourceId: invoice.id, reversesEntryId: null },
    { number: expenseNumber, what: 'Expense account' },
    { number: clearingNumber, what: 'Clearing account' },
    amount,
  );
  if (!entryId) return null;
  return { entryId, debitAccount: expenseNumber, creditAccount: clearingNumber, amount, reversesEntryId: null, expenseSource };
}

/**
 * Post a refund (negative incoming invoice) as the reversal of the original payment's entry: the
 * original's accounts with sides swapped, for the refund's own amount (a partial refund reverses
 * part of it). Without an original entry (original not found or never posted) it reverses what a
 * posting of the payment would have used.
 */
export async function postRefund(
  trx: Knex.Transaction,
  refund: InvoiceToPost,
  provider: ProviderSlug,
  settings: PostingSettings,
  description: string,
): Promise<PostedEntry | null> {
  const amount = fmtMoney(dec(refund.totalGross).abs());
  const original = refund.relatedInvoiceId
    ? await trx('journalEntries').where({ tenantId: refund.tenantId, sourceType: INVOICE_SOURCE, sourceId: refund.relatedInvoiceId }).first()
    : undefined;
  let debitAccount: { number: string; what: string };
  let creditAccount: { number: string; what: string };
  let expenseSource: PostedEntry['expenseSource'] = 'original';
  if (original) {
    const lines = await trx('journalLines as jl')
      .join('ledgerAccounts as a', 'a.id', 'jl.accountId')
      .where({ 'jl.entryId': original.id, 'jl.tenantId': refund.tenantId })
      .select('a.*', 'jl.debit', 'jl.credit');
    const debited = lines.find((l) => dec(l.debit).greaterThan(0));
    const credited = lines.find((l) => dec(l.credit).greaterThan(0));
    if (!debited || !credited) throw new PostingError(`Original entry ${original.id} has no debit or credit line`);
    [debitAccount, creditAccount] = [
      { number: credited.number, what: 'Clearing account' },
      { number: debited.number, what: 'Expense account' },
    ];
  } else {
    const { chart, supplierDefault, history } = await postingContext(trx, refund.tenantId, refund.supplierId, settings.expenseAccount);
    let expenseNumber: string;
    if (settings.expenseAccount) [expenseNumber, expenseSource] = [settings.expenseAccount, 'settings'];
    else if (supplierDefault) [expenseNumber, expenseSource] = [supplierDefault, 'supplier'];
    else if (history) [expenseNumber, expenseSource] = [history, 'history'];
    else [expenseNumber, expenseSource] = [chart.defaultExpense, 'default'];
    [debitAccount, creditAccount] = [
      { number: settings.clearingAccount || chart.clearing[provider], what: 'Clearing account' },
      { number: expenseNumber, what: 'Expense account' },
    ];
  }
  const entryId = await postEntry(
    trx,
    { tenantId: refund.tenantId, date: refund.invoiceDate, description, sourceId: refund.id, reversesEntryId: original?.id ?? null },
    debitAccount,
    creditAccount,
    amount,
  );
  if (!entryId) return null;
  return { entryId, debitAccount: debitAccount.number, creditAccount: creditAccount.number, amount, reversesEntryId: original?.id ?? null, expenseSource };
}
