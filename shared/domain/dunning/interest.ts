import { D, dec, fmtMoney, roundMoney, ZERO, type Dec } from '../money';
import { addDays, isValidDate } from '../dates';
import { realVatId } from '../vatIdentities';
import { unprocessable } from '../../errors';

/**
 * Statutory default interest (docs/dunning.md). The tenant's country decides the law:
 * - DE § 288 BGB: base rate (§ 247 BGB) + 9 points between businesses (Abs. 2), + 5 points with a
 *   consumer (Abs. 1); EUR 40 lump sum from a business debtor (Abs. 5).
 * - AT § 456 UGB: base rate (OeNB) + 9.2 points between businesses; § 1000 Abs. 1 ABGB: 4 % a year
 *   otherwise; EUR 40 lump sum between businesses (§ 458 UGB).
 * Interest runs on the amount due from the day after the due date up to and including the
 * reference date, actual days / 365, split where the base rate changes, each period rounded
 * half-up to the cent. Pure: the base rates are passed in (table base_rates).
 */
export type DunningLaw = 'AT' | 'DE';
export type CustomerType = 'business' | 'consumer';
export const CUSTOMER_TYPES: CustomerType[] = ['business', 'consumer'];

/** A base rate in percent a year, valid from a day until the next one of its country. */
export interface BaseRate {
  validFrom: string;
  rate: string;
}

export interface InterestPeriod {
  /** First and last day of interest (both inclusive). */
  from: string;
  to: string;
  days: number;
  /** The base rate applied, null where the law sets a fixed rate (AT consumers). */
  baseRate: string | null;
  /** The annual rate in percent. */
  rate: string;
  amount: string;
}

export const LUMP_SUM_EUR = '40.00';

/** The law whose default interest applies, or null for a tenant in another country (no statutory rule here). */
export function dunningLaw(tenantCountry: string | null | undefined): DunningLaw | null {
  return tenantCountry === 'AT' || tenantCountry === 'DE' ? tenantCountry : null;
}

/**
 * Business or consumer: the customer's own customerType, else a business when it has a (real) VAT
 * id or a company name. Absent data counts as consumer: the lower rate is the safe claim.
 */
export function customerTypeOf(c: { customerType?: CustomerType | null; vatId?: string | null; company?: string | null } | null | undefined): CustomerType {
  if (c?.customerType) return c.customerType;
  return realVatId(c?.vatId) || c?.company?.trim() ? 'business' : 'consumer';
}

/** Whether the annual rate depends on the base rate (everything but AT consumers' fixed 4 %). */
export const usesBaseRate = (law: DunningLaw, type: CustomerType) => !(law === 'AT' && type === 'consumer');

/** The annual default interest rate in percent for a base rate. */
export function annualRate(law: DunningLaw, type: CustomerType, baseRate: Dec | null): Dec {
  if (!usesBaseRate(law, type)) return new D('4');
  if (baseRate === null) throw new Error('base rate required');
  if (law === 'DE') return baseRate.plus(type === 'business' ? 9 : 5);
  return baseRate.plus('9.2');
}

/** The EUR 40 lump sum (§ 288 Abs. 5 BGB, § 458 UGB): only from a business debtor. */
export const lumpSum = (type: CustomerType): Dec => (type === 'business' ? dec(LUMP_SUM_EUR) : ZERO);

const dayNumber = (date: string) => Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) / 86_400_000;

/** Days from a to b (b - a), whole calendar days. */
export const daysBetween = (a: string, b: string): number => dayNumber(b) - dayNumber(a);

/**
 * Default interest on `principal` from the day after `after` up to and including `through`.
 * `after` is the due date (or the last day an earlier notice charged). An empty span gives 0.00.
 * A span that starts before the first known base rate is refused (422): the rate is not known.
 */
export function defaultInterest(opts: {
  law: DunningLaw;
  customerType: CustomerType;
  principal: string;
  after: string;
  through: string;
  baseRates: BaseRate[];
}): { total: string; periods: InterestPeriod[] } {
  const { law, customerType, after, through } = opts;
  if (!isValidDate(after) || !isValidDate(through)) throw new Error('interest dates must be YYYY-MM-DD');
  const principal = dec(opts.principal);
  const start = addDays(after, 1);
  if (daysBetween(start, through) < 0 || principal.lte(0)) return { total: '0.00', periods: [] };

  // The spans of constant rate: [start, through] cut at every base-rate change inside it.
  const spans: { from: string; to: string; base: BaseRate | null }[] = [];
  if (!usesBaseRate(law, customerType)) {
    spans.push({ from: start, to: through, base: null });
  } else {
    const rates = [...opts.baseRates].sort((a, b) => a.validFrom.localeCompare(b.validFrom));
    let current = rates.filter((r) => r.validFrom <= start).at(-1);
    if (!current) {
      throw unprocessable(`No ${law} base rate is known for ${start}: add it (docs/dunning.md, "Base rates") before charging interest for that time`);
    }
    let from = start;
    for (const next of rates.filter((r) => r.validFrom > start && r.validFrom <= through)) {
      spans.push({ from, to: addDays(next.validFrom, -1), base: current });
      from = next.validFrom;
      current = next;
    }
    spans.push({ from, to: through, base: current });
  }

  const periods = spans.map(({ from, to, base }) => {
    const days = daysBetween(from, to) + 1;
    const rate = annualRate(law, customerType, base ? dec(base.rate) : null);
    // A negative annual rate (never so far: the lowest base rate was -0.88 %) would mean no interest.
    const amount = rate.lte(0) ? ZERO : roundMoney(principal.times(rate).times(days).dividedBy(36_500));
    return { from, to, days, baseRate: base ? fmtRate2(base.rate) : null, rate: fmtRate2(rate), amount: fmtMoney(amount) };
  });
  const total = periods.reduce<Dec>((sum, p) => sum.plus(p.amount), ZERO);
  return { total: fmtMoney(total), periods };
}

/** A rate in percent with two places ("10.27", "-0.88", "4.00"); AT's + 9.2 gives at most two. */
const fmtRate2 = (v: string | Dec) => dec(v).toFixed(2);
