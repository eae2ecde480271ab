import { D, dec, fmtMoney, MONEY_RE, ZERO, type Dec } from '../money';
import { addDays } from '../dates';
import type { ErrorDetail } from '../../errors';
import { defaultInterest, dunningLaw, lumpSum, type BaseRate, type CustomerType, type InterestPeriod } from './interest';

/**
 * The tenant's dunning settings (tenants.settings.dunning) and the rules of who gets which level
 * when (docs/dunning.md). Pure: the commands pass in the invoice, its earlier notices and the base rates.
 */
export interface DunningLevel {
  /** Days after the due date from which this level may be issued. */
  daysAfterDue: number;
  /** This level's fee, a decimal string in EUR ("5.00"); a receivable of its own. */
  fee: string;
  /** Charge statutory default interest with this notice (docs/dunning.md). */
  chargeInterest: boolean;
  emailSubject: string;
  emailBody: string;
}

export interface DunningSettings {
  enabled: boolean;
  /** Issue and e-mail notices in the daily run; otherwise they wait as proposals for review. */
  automatic: boolean;
  levels: DunningLevel[];
}

export const MAX_DUNNING_LEVELS = 3;
export const DUNNING_VARIABLES = [
  'customerName',
  'invoiceNumber',
  'noticeNumber',
  'level',
  'dueDate',
  'amountDue',
  'fee',
  'interest',
  'totalDue',
  'companyName',
] as const;

export const DEFAULT_DUNNING_SETTINGS: DunningSettings = { enabled: false, automatic: false, levels: [] };

/** Problems JSON Schema cannot see: order of the levels, fee amounts, interest without a law. */
export function dunningSettingsProblems(s: DunningSettings, tenantCountry: string): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  if (s.levels.length > MAX_DUNNING_LEVELS) details.push({ field: 'dunning.levels', message: `at most ${MAX_DUNNING_LEVELS} levels` });
  if (s.enabled && s.levels.length === 0) details.push({ field: 'dunning.levels', message: 'dunning is enabled but has no level' });
  s.levels.forEach((l, i) => {
    const f = `dunning.levels.${i}`;
    if (!Number.isInteger(l.daysAfterDue) || l.daysAfterDue < 1)
      details.push({ field: `${f}.daysAfterDue`, message: 'must be a whole number of days, at least 1' });
    if (i > 0 && l.daysAfterDue <= s.levels[i - 1].daysAfterDue) {
      details.push({ field: `${f}.daysAfterDue`, message: `must be greater than level ${i}'s (${s.levels[i - 1].daysAfterDue})` });
    }
    if (typeof l.fee !== 'string' || !MONEY_RE.test(l.fee) || dec(l.fee).lt(0)) {
      details.push({ field: `${f}.fee`, message: 'must be a decimal string in EUR with at most 2 places, 0 or more, e.g. "5.00"' });
    }
    if (l.chargeInterest && !dunningLaw(tenantCountry)) {
      details.push({
        field: `${f}.chargeInterest`,
        message: `no statutory default interest rate is known for tenants in ${tenantCountry} (AT and DE only): turn chargeInterest off`,
      });
    }
  });
  return details;
}

export interface IssuedNotice {
  level: number;
  issueDate: string;
  /** Last day the notice charged interest for (null: none charged). */
  interestTo: string | null;
  fee: string;
  interest: string;
  lumpSumCharged: boolean;
}

/**
 * The next level of an invoice and the first day it may be issued: its daysAfterDue after the due
 * date, and no sooner after the previous notice than the gap between the two levels' days (an
 * invoice found long overdue does not get level 2 the day after level 1). Null when every level
 * was issued.
 */
export function nextLevel(levels: DunningLevel[], dueDate: string, issued: IssuedNotice[]): { level: number; dueOn: string } | null {
  const last = issued.reduce<IssuedNotice | null>((a, n) => (!a || n.level > a.level ? n : a), null);
  const level = (last?.level ?? 0) + 1;
  if (level > levels.length) return null;
  let dueOn = addDays(dueDate, levels[level - 1].daysAfterDue);
  if (last && level >= 2) {
    const gap = levels[level - 1].daysAfterDue - levels[level - 2].daysAfterDue;
    const afterLast = addDays(last.issueDate, gap);
    if (afterLast > dueOn) dueOn = afterLast;
  }
  return { level, dueOn };
}

export interface NoticeAmounts {
  level: number;
  fee: string;
  interest: string;
  interestFrom: string | null;
  interestTo: string | null;
  periods: InterestPeriod[];
  lumpSumCharged: boolean;
  /** Fees and interest of earlier notices, still owed with the invoice. */
  earlierCharges: string;
  totalDue: string;
}

/**
 * What a notice of `level` issued on `asOf` claims: the level's fee (plus the EUR 40 lump sum the
 * first time interest is charged to a business), interest since the last day an earlier notice
 * charged (else since the due date) through asOf, and the total with the amount due and the
 * earlier notices' charges. Each notice's fee and interest are counted once.
 */
export function noticeAmounts(opts: {
  level: number;
  settings: DunningLevel;
  tenantCountry: string;
  customerType: CustomerType;
  amountDue: string;
  dueDate: string;
  asOf: string;
  issued: IssuedNotice[];
  baseRates: BaseRate[];
}): NoticeAmounts {
  const { settings, issued } = opts;
  const law = dunningLaw(opts.tenantCountry);
  let fee: Dec = dec(settings.fee);
  let interest = '0.00';
  let periods: InterestPeriod[] = [];
  let interestFrom: string | null = null;
  let interestTo: string | null = null;
  let lumpSumCharged = false;
  if (settings.chargeInterest && law) {
    const after = issued.map((n) => n.interestTo).reduce<string>((a, d) => (d && d > a ? d : a), opts.dueDate);
    const r = defaultInterest({ law, customerType: opts.customerType, principal: opts.amountDue, after, through: opts.asOf, baseRates: opts.baseRates });
    interest = r.total;
    periods = r.periods;
    if (periods.length) {
      interestFrom = periods[0].from;
      interestTo = opts.asOf;
    }
    if (!issued.some((n) => n.lumpSumCharged) && opts.customerType === 'business') {
      fee = fee.plus(lumpSum('business'));
      lumpSumCharged = true;
    }
  }
  const earlier = issued.reduce<Dec>((s, n) => s.plus(n.fee).plus(n.interest), ZERO);
  const total = dec(opts.amountDue).plus(earlier).plus(fee).plus(interest);
  return {
    level: opts.level,
    fee: fmtMoney(fee),
    interest,
    interestFrom,
    interestTo,
    periods,
    lumpSumCharged,
    earlierCharges: fmtMoney(earlier),
    totalDue: fmtMoney(new D(total)),
  };
}

/** Everything a notice's PDF and e-mail show, frozen when it is issued (dunning_notices.content). */
export interface DunningNoticeContent {
  number: string;
  level: number;
  issueDate: string;
  law: 'AT' | 'DE' | null;
  customerType: CustomerType;
  seller: { name: string; address: string | null; vatId: string | null; iban: string | null; bic: string | null; email: string | null };
  customer: { name: string; company: string | null; address: string | null };
  invoice: { number: string; issueDate: string; dueDate: string; totalGross: string; amountPaid: string; amountDue: string; currency: string };
  /** Fees and interest of the invoice's earlier notices, still owed. */
  earlier: { number: string; level: number; fee: string; interest: string }[];
  fee: string;
  lumpSum: string;
  interest: string;
  periods: InterestPeriod[];
  totalDue: string;
  /** The day by which the customer is asked to pay (issue date + 14 days). */
  payBy: string;
}

/** Days the customer is given after a notice to pay (stated on it). */
export const PAY_WITHIN_DAYS = 14;

/** {{variable}} of DUNNING_VARIABLES replaced; anything else stays as typed. */
export function renderDunningTemplate(tpl: string, vars: Partial<Record<(typeof DUNNING_VARIABLES)[number], string | number>>): string {
  return tpl.replace(/\{\{\s*([A-Za-z][A-Za-z0-9_]*)\s*\}\}/g, (m, name: string) =>
    Object.hasOwn(vars, name) && (DUNNING_VARIABLES as readonly string[]).includes(name) ? String(vars[name as keyof typeof vars]) : m,
  );
}

/** A notice's number: its own series per tenant and year, e.g. MA-2026-00001. */
export const dunningNoticeNumber = (year: number, counter: number): string => `MA-${year}-${String(counter).padStart(5, '0')}`;
