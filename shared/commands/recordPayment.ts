import { audit } from '../audit';
import { invalidInput } from '../errors';
import { assertTransition } from '../domain/invoiceStates';
import { type Dec, dec, fmtMoney } from '../domain/money';
import { applyPayment } from '../domain/invoiceTotals';
import { isValidDate, todayVienna } from '../domain/dates';
import type { CommandContext } from './types';
import { Invoice } from '../models/Invoice';
import { Payment } from '../models/Payment';
import { lockInvoice } from './invoices/locking';
import { emitPaymentEvents } from './outboundWebhooks/emitEvent';

export const PAYMENT_METHODS = ['bank_transfer', 'cash', 'card', 'paypal', 'stripe', 'sepa_direct_debit', 'other'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

export interface PaymentInput {
  amount: string;
  date: string;
  method: PaymentMethod;
}

/**
 * POST /api/invoices/:id/payments: offen|teilbezahlt → teilbezahlt|bezahlt. The invoice row is
 * locked first, so two concurrent payments are checked one after the other against amountDue
 * and together can never exceed the total. amount > amountDue → 422. The payment date may lie
 * before the issue date (deposits, prepayments) but not in the future (Vienna date): a payment
 * that has not happened cannot be booked.
 */
export async function recordPayment({ trx, actor }: CommandContext, invoiceId: string, input: PaymentInput): Promise<{ paymentId: string }> {
  const tenantId = actor.tenantId;
  let amount: Dec;
  try {
    amount = dec(input.amount);
  } catch {
    throw invalidInput('Payment failed validation', [{ field: 'amount', message: 'must be a decimal string such as "100.00"' }]);
  }
  if (amount.lessThanOrEqualTo(0) || amount.decimalPlaces() > 2) {
    throw invalidInput('Payment failed validation', [{ field: 'amount', message: 'must be greater than 0 with at most 2 decimal places' }]);
  }
  if (!isValidDate(input.date)) throw invalidInput('Payment failed validation', [{ field: 'date', message: 'must be a date YYYY-MM-DD' }]);
  if (input.date > todayVienna()) throw invalidInput('Payment failed validation', [{ field: 'date', message: 'must not be in the future' }]);
  if (!(PAYMENT_METHODS as readonly string[]).includes(input.method)) {
    throw invalidInput('Payment failed validation', [{ field: 'method', message: `must be one of: ${PAYMENT_METHODS.join(', ')}` }]);
  }

  const row = await lockInvoice(trx, tenantId, invoiceId);
  // State and type first: a payment on a draft or a cancelled invoice is refused whatever its amount.
  assertTransition(row.status, 'pay', { type: row.type });
  const after = applyPayment(fmtMoney(row.totalGross), fmtMoney(row.amountPaid), amount);
  const next = assertTransition(row.status, 'pay', { type: row.type, fullyPaid: after.fullyPaid });
  // The invoice first: the payment's trigger then finds it already written by this transaction
  // and does not touch it a second time (migration 20261126090000).
  await Invoice.query(trx).where({ tenantId, id: invoiceId }).patch({ amountPaid: after.amountPaid, status: next, updatedAt: trx.fn.now() });
  const payment = await Payment.query(trx)
    .insert({ tenantId, invoiceId, amount: fmtMoney(amount), date: input.date, method: input.method, createdBy: actor.userId })
    .returning('*');
  await audit(trx, actor, {
    action: 'invoice.payment_recorded',
    entityType: 'invoice',
    entityId: invoiceId,
    data: { paymentId: payment.id, amount: fmtMoney(amount), from: row.status, to: next },
  });
  await emitPaymentEvents({ trx, actor }, invoiceId, next, { id: payment.id });
  return { paymentId: payment.id };
}
