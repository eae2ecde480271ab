import { audit } from '../audit';
import { notFound } from '../errors';
import { assertTransition } from '../domain/invoiceStates';
import { dec, fmtMoney } from '../domain/money';
import { Invoice } from '../models/Invoice';
import { Payment } from '../models/Payment';
import { lockInvoice } from './invoices/locking';
import type { CommandContext } from './types';

/**
 * Undo a recorded payment (a bank match taken back, docs/bank-statements.md "Unmatch"): the
 * invoice goes back to teilbezahlt or offen (invoiceStates 'unpay'; refused with 422 on a
 * cancelled invoice) and the payment row is deleted. The audit row keeps what it was; the ledger
 * keeps its entry and gets a reversing one from the caller (the payment table has no negative
 * rows: a check constraint, and amount_paid is the sum of what stands).
 */
export async function reversePayment({ trx, actor }: CommandContext, invoiceId: string, paymentId: string): Promise<{ status: string }> {
  const tenantId = actor.tenantId;
  const row = await lockInvoice(trx, tenantId, invoiceId);
  const payment = await Payment.query(trx).where({ tenantId, invoiceId, id: paymentId }).forUpdate().first();
  if (!payment) throw notFound('Payment');
  const amountPaid = dec(row.amountPaid).minus(dec(payment.amount));
  const next = assertTransition(row.status, 'unpay', { type: row.type, stillPaid: amountPaid.gt(0) });
  await Invoice.query(trx)
    .where({ tenantId, id: invoiceId })
    .patch({ amountPaid: fmtMoney(amountPaid), status: next, updatedAt: trx.fn.now() });
  await Payment.query(trx).where({ tenantId, id: paymentId }).delete();
  await audit(trx, actor, {
    action: 'invoice.payment_reversed',
    entityType: 'invoice',
    entityId: invoiceId,
    data: { paymentId, amount: fmtMoney(dec(payment.amount)), date: payment.date, method: payment.method, from: row.status, to: next },
  });
  return { status: next };
}
