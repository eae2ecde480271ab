import type { Knex } from 'knex';
import { dec, fmtMoney } from '../domain/money';
import type { ProviderSlug } from '../providers/payments/types';
import { findAccount, tenantChart, type LedgerAccountRow } from './accounts';

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
 * reversals excluded); ties go to the most recent. null when the supplier has no history.
 */
export async function detectExpenseFromHistory(trx: Knex.Transaction, tenantId: string, supplierId: string): Promise<string | null> {
  const row = await trx('journalEntries as je')
    .join('invoices as i', function () {
      this.on('i.id', '=', 'je.sourceId').andOn('i.tenantId', '=', 'je.tenantId');
    })
    .join('journalLines as jl', 'jl.entryId', 'je.id')
    .join('ledgerAccounts as a', 'a.id', 'jl.accountId')
    .where({ 'je.tenantId': tenantId, 'je.sourceType': INVOICE_SOURCE, 'i.supplierId': supplierId, 'a.kind': 'expense' })
    .whereNull('je.reversesEntryId')
    .where('jl.debit', '>', 0)
    .groupBy('a.number')
    .select('a.number')
    .count({ uses: '*' })
    .max({ lastUsed: 'je.createdAt' })
    .orderBy([{ column: 'uses', order: 'desc' }, { column: 'lastUsed', order: 'desc' }])
    .first();
  return ((row as { number?: string } | undefined)?.number as string | undefined) ?? null;
}

async function accountOrFail(trx: Knex.Transaction, tenantId: string, number: string, what: string): Promise<LedgerAccountRow> {
  // FOR SHARE: the account cannot be deleted or renumbered while the entry referencing it commits.
  const acc = await trx('ledgerAccounts').where({ tenantId, number }).forShare().first();
  if (!acc) throw new PostingError(`${what} ${number} does not exist in the tenant's chart of accounts`);
  return acc;
}

async function insertEntry(
  trx: Knex.Transaction,
  e: { tenantId: string; date: string; description: string; sourceId: string; reversesEntryId: string | null },
  lines: Array<{ accountId: string; debit: string; credit: string }>,
): Promise<string | null> {
  const [row] = await trx('journalEntries')
    .insert({ tenantId: e.tenantId, date: e.date, description: e.description.slice(0, 500), sourceType: INVOICE_SOURCE, sourceId: e.sourceId, reversesEntryId: e.reversesEntryId })
    .onConflict(['tenantId', 'sourceType', 'sourceId'])
    .ignore()
    .returning('id');
  if (!row) return null; // already posted: never twice
  await trx('journalLines').insert(lines.map((l) => ({ tenantId: e.tenantId, entryId: row.id, ...l })));
  return row.id as string;
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
  const chart = await tenantChart(trx, invoice.tenantId);
  const amount = fmtMoney(dec(invoice.totalGross).abs());

  let expenseNumber: string;
  let expenseSource: PostedEntry['expenseSource'];
  const supplier = await trx('suppliers').where({ tenantId: invoice.tenantId, id: invoice.supplierId }).first('defaultExpenseAccount');
  const supplierDefault = supplier?.defaultExpenseAccount ? await findAccount(trx, invoice.tenantId, supplier.defaultExpenseAccount) : undefined;
  const history = settings.expenseAccount || supplierDefault ? null : await detectExpenseFromHistory(trx, invoice.tenantId, invoice.supplierId);
  if (settings.expenseAccount) [expenseNumber, expenseSource] = [settings.expenseAccount, 'settings'];
  else if (supplierDefault) [expenseNumber, expenseSource] = [supplierDefault.number, 'supplier'];
  else if (history) [expenseNumber, expenseSource] = [history, 'history'];
  else [expenseNumber, expenseSource] = [chart.defaultExpense, 'default'];
  const clearingNumber = settings.clearingAccount || chart.clearing[provider];

  const expense = await accountOrFail(trx, invoice.tenantId, expenseNumber, 'Expense account');
  const clearing = await accountOrFail(trx, invoice.tenantId, clearingNumber, 'Clearing account');
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
    debitAccount = await accountOrFail(trx, refund.tenantId, credited.number, 'Clearing account');
    creditAccount = await accountOrFail(trx, refund.tenantId, debited.number, 'Expense account');
  } else {
    const chart = await tenantChart(trx, refund.tenantId);
    const supplier = await trx('suppliers').where({ tenantId: refund.tenantId, id: refund.supplierId }).first('defaultExpenseAccount');
    let expenseNumber = settings.expenseAccount || null;
    expenseSource = 'settings';
    if (!expenseNumber && supplier?.defaultExpenseAccount && (await findAccount(trx, refund.tenantId, supplier.defaultExpenseAccount))) {
      [expenseNumber, expenseSource] = [supplier.defaultExpenseAccount, 'supplier'];
    }
    if (!expenseNumber) {
      const h = await detectExpenseFromHistory(trx, refund.tenantId, refund.supplierId);
      [expenseNumber, expenseSource] = h ? [h, 'history'] : [chart.defaultExpense, 'default'];
    }
    debitAccount = await accountOrFail(trx, refund.tenantId, settings.clearingAccount || chart.clearing[provider], 'Clearing account');
    creditAccount = await accountOrFail(trx, refund.tenantId, expenseNumber!, 'Expense account');
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
