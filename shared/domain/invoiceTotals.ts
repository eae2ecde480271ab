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
  /** The groups whose tax is the stated one instead of ours (statedTax): not stored, for the caller's warning. */
  statedTaxApplied?: StatedTaxDifference[];
}

/** A received invoice's VAT amount of one rate (EN 16931 BT-117, summed over its categories of that rate). */
export interface StatedTax {
  taxRate: string;
  tax: string;
}

export interface StatedTaxDifference {
  taxRate: string;
  computed: string;
  stated: string;
  /** stated − computed */
  difference: string;
}

/**
 * How far a received invoice's VAT of one rate may be from ours and still be booked as stated:
 * less than one currency unit, the tolerance of BR-CO-17 in the EN 16931 schematron. The supplier
 * states the tax; input tax is what the invoice states (docs/e-invoicing-inbound.md, "Stated VAT").
 */
export const STATED_TAX_TOLERANCE = '1';

/**
 * The stated tax of each rate against our groups: `applied` those within the tolerance that
 * differ (booked as stated), `refused` those at or beyond it, tax stated at 0 %, or stated for a
 * rate the lines do not have. A rate the document states nothing for keeps our tax.
 */
export function compareStatedTax(
  groups: ReadonlyArray<{ taxRate: string; tax: string }>,
  stated: ReadonlyArray<StatedTax>,
): { applied: StatedTaxDifference[]; refused: StatedTaxDifference[] } {
  const sums = new Map<string, Dec>();
  for (const s of stated) sums.set(fmtRate(s.taxRate), (sums.get(fmtRate(s.taxRate)) ?? ZERO).plus(dec(s.tax)));
  const applied: StatedTaxDifference[] = [];
  const refused: StatedTaxDifference[] = [];
  for (const [rate, st] of sums) {
    const computed = dec(groups.find((g) => fmtRate(g.taxRate) === rate)?.tax ?? '0');
    const difference = st.minus(computed);
    if (difference.isZero()) continue;
    const d = { taxRate: rate, computed: fmtMoney(computed), stated: fmtMoney(st), difference: fmtMoney(difference) };
    // Tax at 0 % is no rounding matter: any amount there is refused.
    const known = rate !== '0' && groups.some((g) => fmtRate(g.taxRate) === rate);
    (known && difference.abs().lessThan(STATED_TAX_TOLERANCE) ? applied : refused).push(d);
  }
  return { applied, refused };
}

/**
 * `statedTax` (a received invoice only): each rate's tax is the stated one where
 * compareStatedTax applies it; the difference goes to the group's line of the largest net, so
 * the lines still add up to the group. The caller refuses what compareStatedTax refuses.
 */
export function computeTotals(lines: ReadonlyArray<LineInput>, statedTax?: ReadonlyArray<StatedTax>): InvoiceTotals {
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

  let statedTaxApplied: StatedTaxDifference[] | undefined;
  if (statedTax?.length) {
    statedTaxApplied = compareStatedTax(
      breakdown.map((g) => ({ taxRate: g.rate, tax: fmtMoney(g.tax) })),
      statedTax,
    ).applied;
    for (const d of statedTaxApplied) {
      const g = breakdown.find((b) => b.rate === d.taxRate)!;
      g.tax = dec(d.stated);
      const idx = groups.get(d.taxRate)!;
      const largest = idx.reduce((a, i) => (nets[i].abs().greaterThan(nets[a].abs()) ? i : a), idx[0]);
      taxes[largest] = taxes[largest].plus(dec(d.difference));
    }
  }

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
    ...(statedTaxApplied ? { statedTaxApplied } : {}),
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
