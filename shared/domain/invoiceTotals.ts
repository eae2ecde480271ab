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
  if (!statedTax?.length) {
    const exact = integerTotals(lines);
    if (exact) return exact;
  }
  return decimalTotals(lines, statedTax);
}

/** computeTotals in decimal.js throughout: what integerTotals is checked against (and falls back to). */
export function decimalTotals(lines: ReadonlyArray<LineInput>, statedTax?: ReadonlyArray<StatedTax>): InvoiceTotals {
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

/**
 * computeTotals without decimal.js: the same rules on scaled BigInts (cents, and the tax
 * accumulated at the rate's scale), about ten times cheaper on a create's 10 lines. Exact, as
 * decimalTotals is while no value exceeds its 40 significant digits: so any value of 10^38 or more
 * at its scale, and any input dec() would not read as a plain decimal, returns null and
 * decimalTotals decides (and throws what it throws). A property test compares both.
 */
function integerTotals(lines: ReadonlyArray<LineInput>): InvoiceTotals | null {
  const n = lines.length;
  const nets: bigint[] = new Array(n);
  const rates: string[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const l = lines[i];
    const q = scaled(typeof l.quantity === 'number' ? (Number.isFinite(l.quantity) ? String(l.quantity) : '') : l.quantity);
    const p = scaled(l.unitPrice);
    if (!q || !p) return null;
    const product = q.value * p.value;
    if (tooLarge(product)) return null;
    nets[i] = roundScaled(product, q.scale + p.scale, 2);
  }
  // After the nets, as decimalTotals: an input bad in two ways fails on the same one.
  for (let i = 0; i < n; i++) rates[i] = fmtRate(lines[i].taxRate);
  const taxes: bigint[] = new Array(n).fill(0n);
  // Groups in order of first appearance, then sorted by rate for a stable breakdown.
  const groups = new Map<string, number[]>();
  for (let i = 0; i < n; i++) {
    const g = groups.get(rates[i]);
    if (g) g.push(i);
    else groups.set(rates[i], [i]);
  }
  const breakdown: { rate: string; r: { value: bigint; scale: number }; net: bigint; tax: bigint }[] = [];
  for (const [rate, idx] of groups) {
    const r = scaled(rate);
    if (!r) return null;
    // net (cents) × rate / 100 is exact at scale 2 + r.scale + 2.
    const scale = r.scale + 4;
    let cumulative = 0n;
    let allocated = 0n;
    let groupNet = 0n;
    for (const i of idx) {
      groupNet += nets[i];
      const tax = nets[i] * r.value;
      cumulative += tax;
      if (tooLarge(tax) || tooLarge(cumulative)) return null;
      const roundedCum = roundScaled(cumulative, scale, 2);
      taxes[i] = roundedCum - allocated;
      allocated = roundedCum;
    }
    if (tooLarge(groupNet) || tooLarge(groupNet * r.value)) return null;
    breakdown.push({ rate, r, net: groupNet, tax: roundScaled(groupNet * r.value, scale, 2) });
  }
  breakdown.sort((a, b) => compareScaled(a.r, b.r));
  let totalNet = 0n;
  let totalTax = 0n;
  for (const g of breakdown) {
    totalNet += g.net;
    totalTax += g.tax;
  }
  if (tooLarge(totalNet + totalTax) || tooLarge(totalNet) || tooLarge(totalTax)) return null;
  return {
    lines: lines.map((l, i) => ({
      // A whole number prints as fmtQuantity() would print it, without a decimal.js round trip.
      quantity: Number.isSafeInteger(l.quantity) ? String(l.quantity) : fmtQuantity(l.quantity),
      unitPrice: fmtMoney(l.unitPrice),
      taxRate: rates[i],
      netAmount: fmtCents(nets[i]),
      taxAmount: fmtCents(taxes[i]),
      grossAmount: fmtCents(nets[i] + taxes[i]),
    })),
    totalNet: fmtCents(totalNet),
    totalTax: fmtCents(totalTax),
    totalGross: fmtCents(totalNet + totalTax),
    taxBreakdown: breakdown.map((g) => ({ taxRate: g.rate, net: fmtCents(g.net), tax: fmtCents(g.tax) })),
  };
}

/** What dec() accepts of a string (after trim), as an integer and its decimal places; else null. */
const PLAIN_DECIMAL_RE = /^(-?)(\d+)(?:\.(\d+))?$/;
function scaled(v: unknown): { value: bigint; scale: number } | null {
  if (typeof v !== 'string') return null;
  const m = PLAIN_DECIMAL_RE.exec(v.trim());
  if (!m) return null;
  const frac = m[3] ?? '';
  const value = BigInt(m[2] + frac);
  if (tooLarge(value)) return null;
  return { value: m[1] ? -value : value, scale: frac.length };
}

/** The order of decimal.js's comparedTo on the two values. */
function compareScaled(a: { value: bigint; scale: number }, b: { value: bigint; scale: number }): number {
  const x = a.value * 10n ** BigInt(Math.max(0, b.scale - a.scale));
  const y = b.value * 10n ** BigInt(Math.max(0, a.scale - b.scale));
  return x < y ? -1 : x > y ? 1 : 0;
}

const LIMIT = 10n ** 38n;
const tooLarge = (v: bigint) => v >= LIMIT || v <= -LIMIT;

/** v / 10^from rounded half away from zero (ROUND_HALF_UP) to `to` places, as an integer at that scale. */
function roundScaled(v: bigint, from: number, to: number): bigint {
  if (from <= to) return v * 10n ** BigInt(to - from);
  const d = 10n ** BigInt(from - to);
  const q = v / d;
  const r = v % d;
  if ((r < 0n ? -r : r) * 2n >= d) return v < 0n ? q - 1n : q + 1n;
  return q;
}

/** Cents as fmtMoney() writes them: "1234.50", "-0.01", "0.00". */
function fmtCents(c: bigint): string {
  const neg = c < 0n;
  const digits = (neg ? -c : c).toString().padStart(3, '0');
  return `${neg ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
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
