import { audit } from '../../audit';
import { notFound, unprocessable } from '../../errors';
import { todayVienna } from '../../domain/dates';
import { dec, fmtMoney } from '../../domain/money';
import { amountDue } from '../../domain/invoiceTotals';
import type { MatchRule } from '../../domain/bankStatements';
import { BankTransaction } from '../../models/BankTransaction';
import { Invoice } from '../../models/Invoice';
import { postBankPayment, reverseBankPayment } from '../../ledger/bankPostings';
import { recordPayment } from '../recordPayment';
import { reversePayment } from '../reversePayment';
import type { CommandContext } from '../types';
import { getBankTransaction, type BankTransactionView } from '../../queries/bankStatements';

async function lockTransaction(ctx: CommandContext, id: string): Promise<BankTransaction> {
  const row = await BankTransaction.query(ctx.trx).where({ tenantId: ctx.actor.tenantId, id }).forUpdate().first();
  if (!row) throw notFound('Bank transaction');
  return row;
}

/**
 * Pay `invoiceId` from a locked, unmatched transaction: the payment through recordPayment (its
 * state change, amount-due check and events), its ledger entry on the bank account, and the
 * transaction marked matched. Shared by the automatic and the manual match; the caller has
 * checked direction, currency and amount.
 */
export async function applyMatch(
  ctx: CommandContext,
  tx: BankTransaction,
  m: { invoiceId: string; amount: string; rule: MatchRule; note: string | null; number: string | null },
): Promise<void> {
  const { paymentId } = await recordPayment(ctx, m.invoiceId, { amount: m.amount, date: tx.bookingDate, method: 'bank_transfer' });
  const who = tx.counterpartyName ? ` – ${tx.counterpartyName}` : '';
  await postBankPayment(ctx.trx, {
    tenantId: ctx.actor.tenantId,
    paymentId,
    date: tx.bookingDate,
    amount: m.amount,
    direction: tx.direction,
    description: `Bank ${tx.direction === 'credit' ? 'Zahlungseingang' : 'Zahlungsausgang'} ${m.number ?? m.invoiceId}${who}`,
  });
  const overpaid = dec(tx.amount).minus(dec(m.amount));
  const flags = overpaid.gt(0) ? [...new Set([...tx.flags, 'overpaid' as const])] : tx.flags.filter((f) => f !== 'overpaid');
  await BankTransaction.query(ctx.trx)
    .where({ tenantId: ctx.actor.tenantId, id: tx.id })
    .patch({
      status: 'matched',
      invoiceId: m.invoiceId,
      paymentId,
      matchedAmount: m.amount,
      matchRule: m.rule,
      note: overpaid.gt(0) ? `${fmtMoney(overpaid)} ${tx.currency} beyond the amount due stays unapplied` : m.note,
      flags: flags as never,
      updatedAt: ctx.trx.fn.now() as never,
    });
  await audit(ctx.trx, ctx.actor, {
    action: 'bank_transaction.matched',
    entityType: 'bank_transaction',
    entityId: tx.id,
    data: { invoiceId: m.invoiceId, paymentId, amount: m.amount, rule: m.rule },
  });
}

/**
 * POST /api/bank-transactions/:id/match {invoiceId, amount?}: a person pays an invoice from an
 * unmatched (or ignored) transaction. A credit pays a sales invoice, a debit an incoming one, in
 * the ledger's currency. The amount defaults to the smaller of the transaction and the amount
 * due; more than either is 422 (never an overpayment, never more than the bank moved).
 */
export async function matchBankTransaction(ctx: CommandContext, id: string, input: { invoiceId: string; amount?: string }): Promise<BankTransactionView> {
  const tx = await lockTransaction(ctx, id);
  if (tx.status === 'matched') throw unprocessable(`The transaction is matched already (invoice ${tx.invoiceId}); unmatch it first`);
  if (tx.reversal) throw unprocessable('A reversal (storno) entry cannot pay an invoice');
  const tenant = await ctx.trx('tenants').where({ id: ctx.actor.tenantId }).first('currency');
  if (tx.currency !== tenant.currency) {
    throw unprocessable(`The transaction is in ${tx.currency}; only ${tenant.currency} transactions can pay an invoice (the ledger's currency)`);
  }
  const invoice = await Invoice.query(ctx.trx).where({ tenantId: ctx.actor.tenantId, id: input.invoiceId }).whereNull('deletedAt').first();
  if (!invoice) throw notFound('Invoice');
  const want = tx.direction === 'credit' ? 'rechnung' : 'eingangsrechnung';
  if (invoice.type !== want) {
    throw unprocessable(
      `A ${tx.direction} pays ${tx.direction === 'credit' ? 'a sales invoice (rechnung)' : 'an incoming invoice (eingangsrechnung)'}, not a ${invoice.type}`,
    );
  }
  if (invoice.currency !== tx.currency) throw unprocessable(`The invoice is in ${invoice.currency}, the transaction in ${tx.currency}`);
  const due = dec(amountDue(invoice.totalGross, invoice.amountPaid));
  const available = dec(tx.amount);
  const amount = input.amount === undefined ? (available.lt(due) ? available : due) : dec(input.amount);
  if (amount.gt(available)) throw unprocessable(`${fmtMoney(amount)} is more than the transaction's ${fmtMoney(available)}`, { amount: fmtMoney(available) });
  if (amount.gt(due)) throw unprocessable(`Payment of ${fmtMoney(amount)} exceeds the amount due of ${fmtMoney(due)}`, { amountDue: fmtMoney(due) });
  const number = invoice.type === 'rechnung' ? invoice.number : invoice.invoiceNumber;
  await applyMatch(ctx, tx, { invoiceId: invoice.id, amount: fmtMoney(amount), rule: 'manual', note: null, number });
  return getBankTransaction(ctx.trx, ctx.actor.tenantId, id);
}

/** POST /api/bank-transactions/:id/ignore: not an invoice payment (fees, salaries, transfers); a matched one is unmatched first (422). */
export async function ignoreBankTransaction(ctx: CommandContext, id: string): Promise<BankTransactionView> {
  const tx = await lockTransaction(ctx, id);
  if (tx.status === 'matched') throw unprocessable('The transaction is matched; unmatch it first');
  if (tx.status !== 'ignored') {
    await BankTransaction.query(ctx.trx)
      .where({ tenantId: ctx.actor.tenantId, id })
      .patch({ status: 'ignored', updatedAt: ctx.trx.fn.now() as never });
    await audit(ctx.trx, ctx.actor, { action: 'bank_transaction.ignored', entityType: 'bank_transaction', entityId: id });
  }
  return getBankTransaction(ctx.trx, ctx.actor.tenantId, id);
}

/**
 * POST /api/bank-transactions/:id/unmatch: back to unmatched. A matched transaction's payment is
 * reversed (reversePayment: the invoice goes back to teilbezahlt/offen) and its ledger entry gets
 * a reversing entry dated today; an ignored one is simply unmatched again.
 */
export async function unmatchBankTransaction(ctx: CommandContext, id: string): Promise<BankTransactionView> {
  const tx = await lockTransaction(ctx, id);
  if (tx.status === 'unmatched') return getBankTransaction(ctx.trx, ctx.actor.tenantId, id);
  if (tx.status === 'matched') {
    const { invoiceId, paymentId } = tx as { invoiceId: string; paymentId: string };
    // The transaction first: it references the payment that reversePayment deletes.
    await BankTransaction.query(ctx.trx)
      .where({ tenantId: ctx.actor.tenantId, id })
      .patch({
        status: 'unmatched',
        invoiceId: null,
        paymentId: null,
        matchedAmount: null,
        matchRule: null,
        note: null,
        flags: tx.flags.filter((f) => f !== 'overpaid') as never,
        updatedAt: ctx.trx.fn.now() as never,
      });
    await reversePayment(ctx, invoiceId, paymentId);
    await reverseBankPayment(ctx.trx, ctx.actor.tenantId, paymentId, todayVienna());
    await audit(ctx.trx, ctx.actor, { action: 'bank_transaction.unmatched', entityType: 'bank_transaction', entityId: id, data: { invoiceId, paymentId } });
  } else {
    await BankTransaction.query(ctx.trx)
      .where({ tenantId: ctx.actor.tenantId, id })
      .patch({ status: 'unmatched', updatedAt: ctx.trx.fn.now() as never });
    await audit(ctx.trx, ctx.actor, { action: 'bank_transaction.unignored', entityType: 'bank_transaction', entityId: id });
  }
  return getBankTransaction(ctx.trx, ctx.actor.tenantId, id);
}
