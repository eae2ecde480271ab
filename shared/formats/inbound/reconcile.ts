/**
 * Whether an inbound invoice's lines, allowances, charges and VAT breakdown reproduce its stated
 * totals BT-106..BT-115 to the cent, after EN 16931 BR-CO-10..16 (and the breakdown's basis per
 * category and rate, BR-S-08 style). Amounts are compared rounded half-up to 2 decimals. A total
 * the document leaves out is not a difference: the computed value stands in for it in the later
 * rules (ebInterface has no BT-106..108; BASIC WL and MINIMUM have no lines, so BR-CO-10 and the
 * per-rate basis are skipped there). The caller decides what a difference means (it rejects).
 */
import Decimal from 'decimal.js';
import type { InboundAllowanceCharge, InboundInvoice } from './types';

export interface ReconcileDifference {
  rule: string;
  /** The business term whose stated value disagrees (e.g. 'BT-109', or 'BT-116 S 19'). */
  term: string;
  stated: string;
  computed: string;
}

export interface ReconcileResult {
  matches: boolean;
  differences: ReconcileDifference[];
}

const cents = (d: Decimal.Value) => new Decimal(d).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
const sum = (values: Decimal.Value[]) => values.reduce<Decimal>((a, v) => a.plus(v), new Decimal(0));
const fmt = (d: Decimal) => (d.isZero() ? '0.00' : d.toFixed(2));

const rateKey = (category: string | null, rate: string | null) => `${category ?? '?'} ${rate === null ? '0' : new Decimal(rate).toString()}`;

export function reconcile(invoice: InboundInvoice): ReconcileResult {
  const differences: ReconcileDifference[] = [];
  const t = invoice.totals;
  /** Compares a stated total with its computed value; returns what later rules build on. */
  const check = (rule: string, term: string, stated: string | null, computed: Decimal): Decimal => {
    const c = cents(computed);
    if (stated === null) return c;
    const s = cents(stated);
    if (!s.eq(c)) differences.push({ rule, term, stated: fmt(s), computed: fmt(c) });
    return s;
  };
  const hasLines = invoice.lines.length > 0;

  const lineNet = hasLines
    ? check('BR-CO-10', 'BT-106', t.lineNet, sum(invoice.lines.map((l) => l.netAmount)))
    : cents(t.lineNet ?? sum([t.net ?? 0, t.allowances ?? 0]).minus(t.charges ?? 0));
  const allowances = check('BR-CO-11', 'BT-107', t.allowances, sum(invoice.allowances.map((a) => a.amount)));
  const charges = check('BR-CO-12', 'BT-108', t.charges, sum(invoice.charges.map((c) => c.amount)));
  const net = check('BR-CO-13', 'BT-109', t.net, lineNet.minus(allowances).plus(charges));
  const tax = check('BR-CO-14', 'BT-110', t.tax, sum(invoice.vatBreakdown.map((v) => v.tax)));
  const gross = check('BR-CO-15', 'BT-112', t.gross, net.plus(tax));
  check(
    'BR-CO-16',
    'BT-115',
    t.due,
    gross
      .minus(t.prepaid ?? 0)
      .plus(t.rounding ?? 0)
      .plus(t.thirdPartyPayments ?? 0),
  );

  if (hasLines) {
    // Each breakdown's basis (BT-116) is its lines' net plus charges minus allowances of that category and rate.
    const bases = new Map<string, Decimal>();
    const add = (key: string, amount: Decimal.Value) => bases.set(key, (bases.get(key) ?? new Decimal(0)).plus(amount));
    for (const l of invoice.lines) add(rateKey(l.vatCategory, l.vatRate), l.netAmount);
    const adjust = (list: InboundAllowanceCharge[], sign: 1 | -1) => {
      for (const ac of list) add(rateKey(ac.vatCategory, ac.vatRate), new Decimal(ac.amount).times(sign));
    };
    adjust(invoice.charges, 1);
    adjust(invoice.allowances, -1);
    const stated = new Map<string, Decimal>();
    for (const v of invoice.vatBreakdown) {
      const key = rateKey(v.category, v.rate);
      stated.set(key, (stated.get(key) ?? new Decimal(0)).plus(v.basis));
    }
    for (const key of new Set([...bases.keys(), ...stated.keys()])) {
      const s = cents(stated.get(key) ?? 0);
      const c = cents(bases.get(key) ?? 0);
      if (!s.eq(c)) differences.push({ rule: 'BR-CO-18/BR-S-08', term: `BT-116 ${key}`, stated: fmt(s), computed: fmt(c) });
    }
  }
  return { matches: differences.length === 0, differences };
}
