import type { Knex } from 'knex';
import { runCompiledSql } from '../db';
import { dec, fmtMoney } from '../domain/money';
import type { ProviderSlug } from '../providers/payments/types';
import { tenantChart } from './accounts';
import { CHARTS } from '../domain/charts';

/**
 * Posting incoming invoices to the general ledger (docs/ledger.md). Double entry is enforced by
 * the database (a deferred trigger rejects an unbalanced entry at commit) and "once per invoice"
 * by the unique (tenant_id, source_type, source_id) on journal_entries.
 */
export const INVOICE_SOURCE = 'invoice';
/**
 * The reversal of a cancelled incoming invoice's entry (cancelInvoice, same transaction): the
 * original's accounts swapped, full amount, linked by reverses_entry_id, dated like the original
 * so the ledger nets to zero in the period where the reports drop the invoice (docs/reports.md).
 * Null when the invoice was never posted or is reversed already.
 */
export async function postCancellationReversal(trx: Knex.Transaction, tenantId: string, invoiceId: string): Promise<PostedEntry | null> {
  const original = await trx('journalEntries').where({ tenantId, sourceType: INVOICE_SOURCE, sourceId: invoiceId }).first();
  if (!original) return null;
  const { pick, amount } = await reversalOf(trx, tenantId, original.id);
  const posted = await postEntry(
    trx,
    {
      tenantId,
      date: original.date,
      description: `Storno: ${original.description}`,
      sourceId: invoiceId,
      reversesEntryId: original.id,
      sourceType: CANCELLATION_SOURCE,
    },
    pick,
    { debit: 'Account', credit: 'Account' },
    amount,
  );
  if (!posted.id) return null;
  return { entryId: posted.id, debitAccount: posted.debit, creditAccount: posted.credit, amount, reversesEntryId: original.id, expenseSource: 'original' };
}

/**
 * The accounts that reverse an invoice's entry (its debit and credit accounts swapped) and its
 * amount: one lookup for a refund reversing its payment and a cancellation reversing its invoice.
 * The entries the service posts for invoices are one debit and one credit line.
 */
async function reversalOf(trx: Knex.Transaction, tenantId: string, entryId: string): Promise<{ pick: AccountPick; amount: string }> {
  const lines = await trx('journalLines as jl')
    .join('ledgerAccounts as a', 'a.id', 'jl.accountId')
    .where({ 'jl.entryId': entryId, 'jl.tenantId': tenantId })
    .select('a.number', 'jl.debit', 'jl.credit');
  const debited = lines.find((l) => dec(l.debit).greaterThan(0));
  const credited = lines.find((l) => dec(l.credit).greaterThan(0));
  if (!debited || !credited || lines.length !== 2) throw new PostingError(`Original entry ${entryId} is not one debit and one credit line`);
  return { pick: knownAccounts(credited.number, debited.number), amount: fmtMoney(dec(debited.debit)) };
}
