import type { Knex } from 'knex';
import { dec, fmtMoney } from '../domain/money';
import type { ProviderSlug } from '../providers/payments/types';
import { tenantChart, type LedgerAccountRow } from './accounts';
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
  const { rows } = await trx.raw(
    // Raw results are not camel-cased by the knex mappers: hence the quoted alias.
    `select c.chart, c.supplier_default as "supplierDefault",
            case when c.supplier_default is null and not ? then (?) end as history
       from (select (select chart from ledger_accounts where tenant_id = ? limit 1) as chart,
                    (select a.number from suppliers s join ledger_accounts a on a.tenant_id = s.tenant_id and a.number = s.default_expense_account
                      where s.tenant_id = ? and s.id = ?) as supplier_default) c`,
    [!!settingsExpense, expenseHistoryQuery(trx, tenantId, supplierId), tenantId, tenantId, supplierId],
  );
  const row = rows[0] as { chart: string | null; supplierDefault: string | null; history: string | null };
  const chart = row.chart && row.chart in CHARTS ? CHARTS[row.chart as ChartName] : await tenantChart(trx, tenantId);
  return { chart, supplierDefault: row.supplierDefault, history: row.history };
}

/**
 * The posting's accounts in one statement, FOR SHARE: they cannot be deleted or renumbered while
 * the entry referencing them commits. Missing ones fail in the order given, as one lookup each did.
 */
async function accountsOrFail(trx: Knex.Transaction, tenantId: string, wanted: Array<{ number: string; what: string }>): Promise<LedgerAccountRow[]> {
  const rows: LedgerAccountRow[] = await trx('ledgerAccounts')
    .where({ tenantId })
    .whereIn('number', [...new Set(wanted.map((w) => w.number))])
    .forShare();
  return wanted.map((w) => {
    const acc = rows.find((r) => r.number === w.number);
    if (!acc) throw new PostingError(`${w.what} ${w.number} does not exist in the tenant's chart of accounts`);
    return acc;
  });
}

/** The entry and its lines in one statement; null (nothing written) when the invoice is posted already. */
async function insertEntry(
  trx: Knex.Transaction,
  e: { tenantId: string; date: string; description: string; sourceId: string; reversesEntryId: string | null },
  lines: Array<{ accountId: string; debit: string; credit: string }>,
): Promise<string | null> {
  const { rows } = await trx.raw(
    `with e as (
       insert into journal_entries (tenant_id, date, description, source_type, source_id, reverses_entry_id)
       values (?, ?, ?, ?, ?, ?)
       on conflict (tenant_id, source_type, source_id) do nothing
       returning id
     ), l as (
       insert into journal_lines (tenant_id, entry_id, account_id, debit, credit)
       select ?, e.id, x.account_id, x.debit, x.credit
         from e cross join (values ${lines.map(() => '(cast(? as uuid), cast(? as numeric), cast(? as numeric))').join(', ')}) as x(account_id, debit, credit)
     )
     select id from e`,
    [e.tenantId, e.date, e.description.slice(0, 500), INVOICE_SOURCE, e.sourceId, e.reversesEntryId, e.tenantId, ...lines.flatMap((l) => [l.accountId, l.debit, l.credit])],
  );
  return (rows[0]?.id as string | undefined) ?? null; // already posted: never twice
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

  const [expense, clearing] = await accountsOrFail(trx, invoice.tenantId, [
    { number: expenseNumber, what: 'Expense account' },
    { number: clearingNumber, what: 'Clearing account' },
  ]);
  const entryId = await insertEntry(
    trx,
    { tenantId: invoice.tenantId, date: invoice.invoiceDate, description, sourceId: invoice.id, reversesEntryId: null },
    [
      { accountId: expense.id, debit: amount, credit: '0.00' },
      { accountId: clearing.id, debit: '0.00', credit: amount },
    ],
  );
  if (!entryId) return null;
  return { entryId, debitAccount: expense.number, creditAccount: clearing.number, amount, reversesEntryId: null, expenseSource };
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
  let debitAccount: LedgerAccountRow;
  let creditAccount: LedgerAccountRow;
  let expenseSource: PostedEntry['expenseSource'] = 'original';
  if (original) {
    const lines = await trx('journalLines as jl')
      .join('ledgerAccounts as a', 'a.id', 'jl.accountId')
      .where({ 'jl.entryId': original.id, 'jl.tenantId': refund.tenantId })
      .select('a.*', 'jl.debit', 'jl.credit');
    const debited = lines.find((l) => dec(l.debit).greaterThan(0));
    const credited = lines.find((l) => dec(l.credit).greaterThan(0));
    if (!debited || !credited) throw new PostingError(`Original entry ${original.id} has no debit or credit line`);
    [debitAccount, creditAccount] = await accountsOrFail(trx, refund.tenantId, [
      { number: credited.number, what: 'Clearing account' },
      { number: debited.number, what: 'Expense account' },
    ]);
  } else {
    const { chart, supplierDefault, history } = await postingContext(trx, refund.tenantId, refund.supplierId, settings.expenseAccount);
    let expenseNumber: string;
    if (settings.expenseAccount) [expenseNumber, expenseSource] = [settings.expenseAccount, 'settings'];
    else if (supplierDefault) [expenseNumber, expenseSource] = [supplierDefault, 'supplier'];
    else if (history) [expenseNumber, expenseSource] = [history, 'history'];
    else [expenseNumber, expenseSource] = [chart.defaultExpense, 'default'];
    [debitAccount, creditAccount] = await accountsOrFail(trx, refund.tenantId, [
      { number: settings.clearingAccount || chart.clearing[provider], what: 'Clearing account' },
      { number: expenseNumber, what: 'Expense account' },
    ]);
  }
  const entryId = await insertEntry(
    trx,
    { tenantId: refund.tenantId, date: refund.invoiceDate, description, sourceId: refund.id, reversesEntryId: original?.id ?? null },
    [
      { accountId: debitAccount.id, debit: amount, credit: '0.00' },
      { accountId: creditAccount.id, debit: '0.00', credit: amount },
    ],
  );
  if (!entryId) return null;
  return { entryId, debitAccount: debitAccount.number, creditAccount: creditAccount.number, amount, reversesEntryId: original?.id ?? null, expenseSource };
}
