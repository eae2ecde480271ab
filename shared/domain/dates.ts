/**
 * Calendar dates as 'YYYY-MM-DD' strings. "Today" is the business day in Vienna (the service's
 * home time zone): an invoice finalized at 00:30 Vienna time on 1 January belongs to the new
 * year, even though it is still 31 December in UTC.
 */
export const BUSINESS_TIME_ZONE = 'Europe/Vienna';

/** The day last formatted per time zone, with the second (since the epoch) it was formatted for. */
const lastDays = new Map<string, { second: number; day: string }>();

export function todayIn(timeZone = BUSINESS_TIME_ZONE, now: Date = new Date()): string {
  // The day is formatted once per second and zone: formatting cost ~10-20 µs of every invoice
  // create. Exact: every zone's offset (LMT included) is whole seconds, so a day starts on a second.
  const second = Math.floor(now.getTime() / 1000);
  const last = lastDays.get(timeZone);
  if (last?.second === second) return last.day;
  const day = dayFormatter(timeZone).format(now);
  lastDays.set(timeZone, { second, day });
  return day;
}

/**
 * One formatter per time zone: building an Intl.DateTimeFormat loads locale and zone data and
 * cost about a tenth of an invoice create's CPU when made on every call (docs/benchmarks.md).
 */
const dayFormatters = new Map<string, Intl.DateTimeFormat>();
function dayFormatter(timeZone: string): Intl.DateTimeFormat {
  let f = dayFormatters.get(timeZone);
  if (!f) {
    // en-CA formats as YYYY-MM-DD.
    f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    dayFormatters.set(timeZone, f);
  }
  return f;
}

export const todayVienna = (now?: Date) => todayIn(BUSINESS_TIME_ZONE, now);

export interface WallClock {
  year: string;
  month: string;
  day: string;
  hour: string;
  minute: string;
  second: string;
}

/** Calendar date and wall-clock time of an instant in a time zone, as zero-padded fields (hours 00–23). */
export function wallClockIn(timeZone: string, instant: Date): WallClock {
  const parts = Object.fromEntries(
    wallClockFormatter(timeZone)
      .formatToParts(instant)
      .map((p) => [p.type, p.value]),
  );
  return { year: parts.year, month: parts.month, day: parts.day, hour: parts.hour, minute: parts.minute, second: parts.second };
}

const wallClockFormatters = new Map<string, Intl.DateTimeFormat>();
function wallClockFormatter(timeZone: string): Intl.DateTimeFormat {
  let f = wallClockFormatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    wallClockFormatters.set(timeZone, f);
  }
  return f;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

export function isValidDate(s: unknown): s is string {
  if (typeof s !== 'string') return false;
  const m = DATE_RE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === s;
}

export function addDays(date: string, days: number): string {
  if (!isValidDate(date)) throw new Error(`invalid date ${date}`);
  const [y, m, d] = date.split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

export const yearOf = (date: string): number => Number(date.slice(0, 4));

/** Payment term when neither the invoice nor the customer sets one (days). */
export const DEFAULT_PAYMENT_TERM_DAYS = 14;

/**
 * Payment term and due date that finalizing a draft on issueDate sets: the invoice's term, else
 * the customer's, else DEFAULT_PAYMENT_TERM_DAYS. sendInvoice stores these, and the e-mail
 * preview of a draft shows the due date a send on the same day would set, so both ask this one
 * function.
 */
export function termsOnFinalization(
  issueDate: string,
  invoiceTermDays: number | null | undefined,
  customerTermDays: number | null | undefined,
): { paymentTermDays: number; dueDate: string } {
  const paymentTermDays = invoiceTermDays ?? customerTermDays ?? DEFAULT_PAYMENT_TERM_DAYS;
  return { paymentTermDays, dueDate: addDays(issueDate, paymentTermDays) };
}

/**
 * What is wrong with a service period (Leistungszeitraum) from serviceDate to serviceEndDate, as
 * a message about serviceEndDate, or null when there is nothing wrong (also when there is no end:
 * a single day of service). YYYY-MM-DD dates compare as text. The database checks the same rule
 * (invoices_service_period_check); the API and the e-invoice export ask this.
 */
export function servicePeriodProblem(serviceDate: string | null | undefined, serviceEndDate: string | null | undefined): string | null {
  if (!serviceEndDate) return null;
  if (!serviceDate) return 'needs serviceDate, the first day of the service period';
  if (serviceEndDate < serviceDate) return 'must not be before serviceDate';
  return null;
}
