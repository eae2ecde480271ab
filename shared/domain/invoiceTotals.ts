import { invalidInput, unprocessable } from '../errors';
import { D, type Dec, ZERO, dec, fmtMoney, fmtQuantity, fmtRate, roundMoney } from './money';

/**
 * Invoice totals, EN 16931 style (BR-CO-10…17): line nets rounded half-up, tax once per rate on
 * the group's summed net. Line taxAmount is informative (EN 16931 has none) and allocated by
 * cumulative rounding so a group's lines add up exactly to its tax (docs/money.md, "Rounding" and
 * "Line tax allocation").
 */
export interface LineInput {
  quantity: string | number;
  unitPrice: string;
  taxRate: string;
}

export interface LineTotals {
  quantity: string;
  unitPrice: string;
  taxRate: string;
  netAmount: string;
  taxAmount: string;
  grossAmount: string;
}

export interface TaxGroup {
  taxRate: string;
  net: string;
  tax: string;
}

export interface InvoiceTotals {
  lines: LineTotals[];
  totalNet: string;
  totalTax: string;
  totalGross: string;
  taxBreakdown: TaxGroup[];
}

export function computeTotals(lines: ReadonlyArray<LineInput>): InvoiceTotals {
  const nets = lines.map((l) => roundMoney(dec(l.quantity).times(dec(l.unitPrice))));
  const rates = lines.map((l) => fmtRate(l.taxRate));
  const taxes: Dec[] = lines.map(() => ZERO);

  // Groups in order of first appearance, then sorted by rate for a stable breakdown.
  const groups = new Map<string, number[]>();
  for (const [i, r] of rates.entries()) groups.set(r, [...(groups.get(r) ?? []), i]);

  const breakdown: { rate: string; net: Dec; tax: Dec }[] = [];
  for (const [rate, idx] of groups) {
    const pct = new D(rate).dividedBy(100);
    let cumulative: Dec = ZERO;
    let allocated: Dec = ZERO;
    let groupNet: Dec = ZERO;
    for (const i of idx) {
      groupNet = groupNet.plus(nets[i]);
      cumulative = cumulative.plus(nets[i].times(pct));
      const roundedCum = roundMoney(cumulative);
      taxes[i] = roundedCum.minus(allocated);
      allocated = roundedCum;
    }
    breakdown.push({ rate, net: groupNet, tax: roundMoney(groupNet.times(pct)) });
  }
  breakdown.sort((a, b) => new D(a.rate).comparedTo(new D(b.rate)));

  const totalNet = breakdown.reduce<Dec>((a, g) => a.plus(g.net), ZERO);
  const totalTax = breakdown.reduce<Dec>((a, g) => a.plus(g.tax), ZERO);
  return {
    lines: lines.map((l, i) => ({
      quantity: fmtQuantity(l.quantity),
      unitPrice: fmtMoney(l.unitPrice),
      taxRate: rates[i],
      netAmount: fmtMoney(nets[i]),
      taxAmount: fmtMoney(taxes[i]),
      grossAmount: fmtMoney(nets[i].plus(taxes[i])),
    })),
    totalNet: fmtMoney(totalNet),
    totalTax: fmtMoney(totalTax),
    totalGross: fmtMoney(totalNet.plus(totalTax)),
    taxBreakdown: breakdown.map((g) => ({ taxRate: g.rate, net: fmtMoney(g.net), tax: fmtMoney(g.tax) })),
  };
}

/** amountDue = totalGross − amountPaid, never below zero. */
export function amountDue(totalGross: string, amountPaid: string): string {
  const due = dec(totalGross).minus(dec(amountPaid));
  return fmtMoney(due.isNegative() ? ZERO : due);
}

export interface PaymentOutcome {
  amountPaid: string;
  amountDue: string;
  /** The payment settles the invoice (→ bezahlt). */
  fullyPaid: boolean;
}

/**
 * The payment rule (docs/invoices.md, "Payments"): amount > 0 with at most 2 places, else 400;
 * above amountDue, 422. Pure, so the command and the property tests check the same code: it keeps
 * amountPaid + amountDue = totalGross and amountDue ≥ 0 (an overpayment is never booked, the
 * customer's surplus is not our receivable). Whether the state allows a payment at all is
 * invoiceStates' job; call this after assertTransition.
 */
export function applyPayment(totalGross: string, amountPaid: string, amount: string | Dec): PaymentOutcome {
  const a = dec(amount);
  if (a.lessThanOrEqualTo(0) || a.decimalPlaces() > 2) {
    throw invalidInput('Payment failed validation', [{ field: 'amount', message: 'must be greater than 0 with at most 2 decimal places' }]);
  }
  const due = dec(amountDue(totalGross, amountPaid));
  if (a.greaterThan(due)) {
    throw unprocessable(`Payment of ${fmtMoney(a)} exceeds the amount due of ${fmtMoney(due)}`, { amountDue: fmtMoney(due) });
  }
  const paid = dec(amountPaid).plus(a);
  return { amountPaid: fmtMoney(paid), amountDue: amountDue(totalGross, fmtMoney(paid)), fullyPaid: paid.greaterThanOrEqualTo(dec(totalGross)) };
}
