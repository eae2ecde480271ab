/**
 * The billing calendar of a recurring invoice (docs/recurring-invoices.md). Pure date arithmetic
 * on YYYY-MM-DD strings (UTC calendar days, no time zone involved).
 *
 * Period k starts on the k-th billing date: the anchor month (startDate's month, or the next one
 * when dayOfMonth falls before startDate's day) plus k intervals, on dayOfMonth, or on the last
 * day of a month that is shorter (31 → 28/29 February, 30 April). Every period's day is derived
 * from the anchor, never from the previous period, so a 31st that became 28 February is the
 * 31st again in March. A period ends the day before the next one starts, or on endDate.
 */
export const INTERVALS = ['monthly', 'quarterly', 'halfYearly', 'yearly'] as const;
export type Interval = (typeof INTERVALS)[number];

export const INTERVAL_MONTHS: Record<Interval, number> = { monthly: 1, quarterly: 3, halfYearly: 6, yearly: 12 };

export interface Schedule {
  interval: Interval;
  /** 1–31; null: startDate's day. */
  dayOfMonth: number | null;
  startDate: string;
  endDate: string | null;
}

export interface Period {
  index: number;
  /** The billing date: the invoice of the period is due to be issued on it. */
  start: string;
  end: string;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const daysInMonth = (year: number, month0: number) => new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate();

function dateOf(monthIndex: number, day: number): string {
  const year = Math.floor(monthIndex / 12);
  const month0 = monthIndex - year * 12;
  return `${pad(year, 4)}-${pad(month0 + 1)}-${pad(Math.min(day, daysInMonth(year, month0)))}`;
}

function previousDay(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - 1);
  return d.toISOString().slice(0, 10);
}

/** The start of period k, ignoring endDate. */
export function periodStart(s: Schedule, k: number): string {
  const [y, m, d] = s.startDate.split('-').map(Number);
  const day = s.dayOfMonth ?? d;
  let anchor = y * 12 + (m - 1);
  if (dateOf(anchor, day) < s.startDate) anchor += 1;
  return dateOf(anchor + k * INTERVAL_MONTHS[s.interval], day);
}

/** Period k, or null when it would start after endDate. */
export function periodAt(s: Schedule, k: number): Period | null {
  const start = periodStart(s, k);
  if (s.endDate && start > s.endDate) return null;
  const nextDayBefore = previousDay(periodStart(s, k + 1));
  const end = s.endDate && s.endDate < nextDayBefore ? s.endDate : nextDayBefore;
  return { index: k, start, end };
}

/** Up to `count` periods from index `from` on (fewer when endDate comes first). */
export function periodsFrom(s: Schedule, from: number, count: number): Period[] {
  const out: Period[] = [];
  for (let k = from; out.length < count; k++) {
    const p = periodAt(s, k);
    if (!p) break;
    out.push(p);
  }
  return out;
}
