import type { Knex } from 'knex';
import { tenantChart } from './accounts';
import { insertEntry } from './posting';
import type { Direction } from '../domain/bankStatements';

/**
 * Postings of payments matched from the bank statement (docs/bank-statements.md, "Ledger"): a
 * credit paying a sales invoice debits the bank and credits receivables; a debit paying an
 * incoming invoice debits payables and credits the bank. One entry per payment (source
 * `bank_payment`, the payment's id; the unique source key makes it once only); unmatching posts
 * the reversal (`bank_payment_reversal`, same source id, sides swapped, reverses_entry_id).
 */
export const BANK_PAYMENT_SOURCE = 'bank_payment';
export const BANK_PAYMENT_REVERSAL_SOURCE = 'bank_payment_reversal';

/** Post one bank payment; returns the entry's id (null: it was posted before). */
export async function postBankPayment(
  trx: Knex.Transaction,
  p: { tenantId: string; paymentId: string; date: string; amount: string; direction: Direction; description: string },
): Promise<string | null> {
  const chart = await tenantChart(trx, p.tenantId);
  const [debit, credit] = p.direction === 'credit' ? [chart.bank, chart.receivables] : [chart.payables, chart.bank];
  return insertEntry(
    trx,
    { tenantId: p.tenantId, date: p.date, description: p.description, sourceType: BANK_PAYMENT_SOURCE, sourceId: p.paymentId, reversesEntryId: null },
    [
      { account: debit, debit: p.amount, credit: '0.00' },
      { account: credit, debit: '0.00', credit: p.amount },
    ],
  );
}

/**
 * Reverse a bank payment's entry (its lines with the sides swapped, dated `date`: the day it was
 * undone, since the period of the payment may be closed). Null when it had no entry or was reversed.
 */
export async function reverseBankPayment(trx: Knex.Transaction, tenantId: string, paymentId: string, date: string): Promise<string | null> {
  const original = await trx('journalEntries').where({ tenantId, sourceType: BANK_PAYMENT_SOURCE, sourceId: paymentId }).first('id', 'description');
  if (!original) return null;
  const lines: { number: string; debit: string; credit: string }[] = await trx('journalLines as l')
    .join('ledgerAccounts as a', 'a.id', 'l.accountId')
    .where({ 'l.tenantId': tenantId, 'l.entryId': original.id })
    .select('a.number', 'l.debit', 'l.credit');
  return insertEntry(
    trx,
    {
      tenantId,
      date,
      description: `Storno: ${original.description}`,
      sourceType: BANK_PAYMENT_REVERSAL_SOURCE,
      sourceId: paymentId,
      reversesEntryId: original.id,
    },
    lines.map((l) => ({ account: l.number, debit: l.credit, credit: l.debit })),
  );
}
