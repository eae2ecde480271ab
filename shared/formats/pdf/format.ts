/**
 * German/Austrian presentation of the decimal strings and ISO dates an InvoiceView carries.
 * Everything works on the strings themselves: money is never turned into a JS float, so
 * "0.10" + "0.20" problems cannot creep into what an auditor reads.
 */

const DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?$/;

function groupThousands(intPart: string): string {
  return intPart.replace(/\B(?=(\d{3})+(?!\d))/g, '.');
}

/** Splits "-1234.5" into sign, integer and fraction digits; throws on anything else. */
function parseDecimal(value: string): { negative: boolean; int: string; frac: string } {
  const m = DECIMAL.exec(String(value).trim());
  if (!m) throw new Error(`Not a decimal string: ${JSON.stringify(value)}`);
  const int = m[2].replace(/^0+(?=\d)/, '');
  const frac = m[3] ?? '';
  const isZero = /^0*$/.test(int) && /^0*$/.test(frac);
  return { negative: m[1] === '-' && !isZero, int, frac };
}

/** "1234.5" → "1.234,50" (exactly two places; the domain already rounded, we only pad). */
export function formatAmount(value: string): string {
  const { negative, int, frac } = parseDecimal(value);
  if (frac.length > 2 && !/^0*$/.test(frac.slice(2))) {
    // Money reaches us rounded to cents; printing more would disagree with the totals.
    throw new Error(`Money value with more than two decimal places: ${value}`);
  }
  const cents = `${frac}00`.slice(0, 2);
  return `${negative ? '-' : ''}${groupThousands(int)},${cents}`;
}

const CURRENCY_SYMBOLS: Record<string, string> = { EUR: '€' };

/** "1234.50", "EUR" → "1.234,50 €"; other currencies keep their ISO code: "1.234,50 CHF". */
export function formatMoney(value: string, currency = 'EUR'): string {
  const code = (currency || 'EUR').toUpperCase();
  return `${formatAmount(value)} ${CURRENCY_SYMBOLS[code] ?? code}`;
}

/** Quantities keep up to four places without trailing zeros: "2.5000" → "2,5", "1000" → "1.000". */
export function formatQuantity(value: string): string {
  const { negative, int, frac } = parseDecimal(value);
  const trimmed = frac.slice(0, 4).replace(/0+$/, '');
  return `${negative ? '-' : ''}${groupThousands(int)}${trimmed ? `,${trimmed}` : ''}`;
}

/** Tax rate "20" → "20 %", "7.50" → "7,5 %" (DIN 5008 puts a space before %). */
export function formatPercent(rate: string): string {
  return `${formatQuantity(rate)} %`;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})/;

/** "2026-01-15" (or an ISO timestamp) → "15.01.2026". Parsed as text: no timezone shifts. */
export function formatDate(isoDate: string): string {
  const m = ISO_DATE.exec(isoDate);
  if (!m) throw new Error(`Not an ISO date: ${JSON.stringify(isoDate)}`);
  return `${m[3]}.${m[2]}.${m[1]}`;
}

/** Calendar arithmetic on "YYYY-MM-DD" in UTC, so the result never depends on the server's zone. */
export function addDays(isoDate: string, days: number): string {
  const m = ISO_DATE.exec(isoDate);
  if (!m) throw new Error(`Not an ISO date: ${JSON.stringify(isoDate)}`);
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + days));
  return d.toISOString().slice(0, 10);
}

/** True for "0", "0.00", "-0" and the like. */
export function isZero(value: string): boolean {
  const { int, frac } = parseDecimal(value);
  return /^0*$/.test(int) && /^0*$/.test(frac);
}

/** Address as entered ("Street 1\n1010 Wien" or "Street 1, 1010 Wien") → display lines. */
export function addressLines(address: string | null | undefined): string[] {
  if (!address) return [];
  const byNewline = address
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  if (byNewline.length > 1) return byNewline;
  return address
    .split(/,\s*/)
    .map((l) => l.trim())
    .filter(Boolean);
}
