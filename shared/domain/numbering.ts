import type { InvoiceType } from './invoiceView';

/**
 * Invoice numbers: by default <prefix>-<year>-<5-digit counter> (tenants may set their own
 * format), gapless per tenant, type and year of the issue date (§ 11 UStG AT / § 14 UStG DE
 * require a unique, consecutive number). The counter comes from invoice_number_sequences inside
 * the finalizing transaction, so a rollback gives the number back. Incoming invoices keep the
 * supplier's number.
 */
export const NUMBER_PREFIX: Record<Exclude<InvoiceType, 'eingangsrechnung'>, string> = {
  rechnung: 'RE',
  angebot: 'AN',
  gutschrift: 'GS',
};

export type NumberedType = Exclude<InvoiceType, 'eingangsrechnung'>;
export const NUMBERED_TYPES: NumberedType[] = ['rechnung', 'angebot', 'gutschrift'];

/** The default pattern per type; tenants may set their own in settings.numberFormats. */
export const defaultNumberFormat = (type: NumberedType) => `${NUMBER_PREFIX[type]}-{YYYY}-{NNNNN}`;

/**
 * A pattern filled in: the first {YYYY}, {YY}, {MM} and counter {N…} (a second one stays as
 * text). formatInvoiceNumber() and numberFormatsCanCollide() both go through here, so the check
 * reasons about exactly the numbers that are handed out. Function replacers: no `$` patterns.
 */
function fillPattern(p: string, yyyy: string, yy: string, mm: string, counter: (width: number) => string): string {
  return p
    .replace('{YYYY}', () => yyyy)
    .replace('{YY}', () => yy)
    .replace('{MM}', () => mm)
    .replace(/\{(N+)\}/, (_, n: string) => counter(n.length));
}

/**
 * Format a number from a pattern: {YYYY}, {YY}, {MM} (month of the issue date) and one counter
 * {N…} whose length is the zero padding. The counter series stays per type and year, so a
 * pattern without {YYYY} still restarts each year — document the year in the pattern.
 */
export function formatInvoiceNumber(type: InvoiceType, year: number, counter: number, pattern?: string | null, month = 1): string {
  if (type === 'eingangsrechnung') throw new Error('incoming invoices keep the supplier number');
  if (!Number.isInteger(counter) || counter < 1) throw new Error(`invalid counter ${counter}`);
  const p = pattern || defaultNumberFormat(type);
  return fillPattern(p, String(year), String(year % 100).padStart(2, '0'), String(month).padStart(2, '0'), (width) => String(counter).padStart(width, '0'));
}

/**
 * Whether two types' patterns might give the same number (false = provably never). Each type has
 * its own counter, so the unique index (tenant, type, number) would not stop it, yet § 11 Abs 1
 * Z 3 UStG AT / § 14 Abs 4 Nr 4 UStG DE require numbers unique across types. Apart = different
 * text once digits are removed, or a character that cannot match outside the counters (a counter
 * grows past its N's); anything else collides (docs/invoices.md, "Numbering").
 */
export function numberFormatsCanCollide(a: string, b: string): boolean {
  const A = shapeOf(a);
  const B = shapeOf(b);
  if (A.symbols !== B.symbols) return false;
  const differ = (x: string, y: string) => !(x === y || (x === DIGIT && /\d/.test(y)) || (y === DIGIT && /\d/.test(x)));
  for (let i = 0; i < Math.min(A.head.length, B.head.length); i++) if (differ(A.head[i], B.head[i])) return false;
  for (let i = 1; i <= Math.min(A.tail.length, B.tail.length); i++) if (differ(A.tail[A.tail.length - i], B.tail[B.tail.length - i])) return false;
  return true;
}

/** Stand-ins outside the pattern grammar: any one digit (year, month), the counter (≥ 1 digit). */
const DIGIT = '\u0000';
const COUNTER = '\u0001';

function shapeOf(pattern: string): { head: string; tail: string; symbols: string } {
  const s = fillPattern(pattern, DIGIT.repeat(4), DIGIT.repeat(2), DIGIT.repeat(2), () => COUNTER);
  const at = s.indexOf(COUNTER);
  return {
    head: at < 0 ? s : s.slice(0, at),
    tail: at < 0 ? '' : s.slice(at + 1),
    // biome-ignore lint/suspicious/noControlCharactersInRegex: \u0000/\u0001 are the placeholders put in above
    symbols: s.replace(/[\u0000\u0001\d]/g, ''),
  };
}

export function parseInvoiceNumber(number: string): { prefix: string; year: number; counter: number } | null {
  const m = /^([A-Z]{2})-(\d{4})-(\d{5,})$/.exec(number);
  return m ? { prefix: m[1], year: Number(m[2]), counter: Number(m[3]) } : null;
}
