import { invalidInput, type ErrorDetail } from '../../errors';
import { BUSINESS_TIME_ZONE, wallClockIn } from '../dates';

/**
 * A VAT return period: a calendar month or a calendar quarter. Dates are calendar dates in
 * Europe/Vienna (the same calendar as Europe/Berlin), inclusive on both ends, as "YYYY-MM-DD".
 * Invoices are selected by their issueDate / invoiceDate, which are calendar dates too, so
 * `start <= date <= end` is the whole rule; no instant arithmetic is involved.
 */
export type TaxPeriod =
  | { kind: 'month'; year: number; month: number; start: string; end: string; label: string }
  | { kind: 'quarter'; year: number; quarter: number; start: string; end: string; label: string };

export interface TaxPeriodInput {
  year: unknown;
  month?: unknown;
  quarter?: unknown;
}

/** Years we accept: U30/UStVA exist electronically since the 2000s; 2999 guards typos. */
const MIN_YEAR = 2000;
const MAX_YEAR = 2999;

function toInt(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  if (typeof value === 'string' && /^\d{1,4}$/.test(value.trim())) return Number(value.trim());
  return undefined;
}

const pad2 = (n: number) => String(n).padStart(2, '0');

function lastDayOfMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Parse and validate {year, month} or {year, quarter}; values may be numbers or query strings.
 * Throws 400 INVALID_INPUT with field details on anything else (both or neither of month/quarter).
 */
export function parseTaxPeriod(input: TaxPeriodInput): TaxPeriod {
  const details: ErrorDetail[] = [];
  const year = toInt(input.year);
  if (year === undefined || year < MIN_YEAR || year > MAX_YEAR) {
    details.push({ field: 'year', message: `must be an integer between ${MIN_YEAR} and ${MAX_YEAR}` });
  }
  const hasMonth = input.month !== undefined && input.month !== null && input.month !== '';
  const hasQuarter = input.quarter !== undefined && input.quarter !== null && input.quarter !== '';
  if (hasMonth === hasQuarter) {
    details.push({ field: hasMonth ? 'quarter' : 'month', message: 'give either month (1-12) or quarter (1-4), not both or neither' });
  }
  let month: number | undefined;
  let quarter: number | undefined;
  if (hasMonth) {
    month = toInt(input.month);
    if (month === undefined || month < 1 || month > 12) details.push({ field: 'month', message: 'must be an integer from 1 to 12' });
  }
  if (hasQuarter) {
    quarter = toInt(input.quarter);
    if (quarter === undefined || quarter < 1 || quarter > 4) details.push({ field: 'quarter', message: 'must be an integer from 1 to 4' });
  }
  if (details.length > 0) throw invalidInput('Invalid tax period', details);
  return month !== undefined ? monthPeriod(year!, month) : quarterPeriod(year!, quarter!);
}

export function monthPeriod(year: number, month: number): TaxPeriod {
  return {
    kind: 'month',
    year,
    month,
    start: `${year}-${pad2(month)}-01`,
    end: `${year}-${pad2(month)}-${pad2(lastDayOfMonth(year, month))}`,
    label: `${year}-${pad2(month)}`,
  };
}

export function quarterPeriod(year: number, quarter: number): TaxPeriod {
  const first = (quarter - 1) * 3 + 1;
  const last = first + 2;
  return {
    kind: 'quarter',
    year,
    quarter,
    start: `${year}-${pad2(first)}-01`,
    end: `${year}-${pad2(last)}-${pad2(lastDayOfMonth(year, last))}`,
    label: `${year}-Q${quarter}`,
  };
}

/** First and last calendar month of the period, as numbers 1-12. */
export function periodMonths(period: TaxPeriod): { from: number; to: number } {
  if (period.kind === 'month') return { from: period.month, to: period.month };
  const from = (period.quarter - 1) * 3 + 1;
  return { from, to: from + 2 };
}

/** "YYYY-MM" of the first and last month (U30 ZRVON / ZRBIS). */
export function periodYearMonths(period: TaxPeriod): { from: string; to: string } {
  const { from, to } = periodMonths(period);
  return { from: `${period.year}-${pad2(from)}`, to: `${period.year}-${pad2(to)}` };
}

/** ELSTER "Zeitraum": "01".."12" for months, "41".."44" for quarters. */
export function elsterZeitraum(period: TaxPeriod): string {
  return period.kind === 'month' ? pad2(period.month) : String(40 + period.quarter);
}

/**
 * Labels of every period that shares at least one month with this one: a month and its quarter,
 * a quarter and its three months. A taxpayer files monthly or quarterly, so a live 2026-03 and a
 * live 2026-Q1 would declare March twice.
 */
export function overlappingPeriodLabels(period: TaxPeriod): string[] {
  if (period.kind === 'month') return [period.label, `${period.year}-Q${Math.ceil(period.month / 3)}`];
  const { from, to } = periodMonths(period);
  const months: string[] = [];
  for (let m = from; m <= to; m++) months.push(`${period.year}-${pad2(m)}`);
  return [period.label, ...months];
}

/** Whether an ISO calendar date "YYYY-MM-DD" falls inside the period (inclusive). */
export function periodContains(period: TaxPeriod, date: string): boolean {
  return date >= period.start && date <= period.end;
}

/** Calendar date and wall-clock time of an instant in Europe/Vienna: { date: "YYYY-MM-DD", time: "HH:MM:SS" }. */
export function viennaDateTime(instant: Date): { date: string; time: string } {
  const parts = wallClockIn(BUSINESS_TIME_ZONE, instant);
  return { date: `${parts.year}-${parts.month}-${parts.day}`, time: `${parts.hour}:${parts.minute}:${parts.second}` };
}
