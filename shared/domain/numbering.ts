import type { InvoiceType } from './invoiceView';

/**
 * Invoice numbers: <prefix>-<year>-<5-digit counter>, gapless per tenant, type and year of the
 * issue date (§ 11 UStG AT / § 14 UStG DE require a unique, consecutive number). The counter
 * comes from invoice_number_sequences inside the finalizing transaction, so a rollback gives the
 * number back. Incoming invoices keep the supplier's number and have no prefix.
 */
export const NUMBER_PREFIX: Record<Exclude<InvoiceType, 'eingangsrechnung'>, string> = {
  rechnung: 'RE',
  angebot: 'AN',
  gutschrift: 'GS',
};

/** The default pattern per type; tenants may set their own in settings.numberFormats. */
export const defaultNumberFormat = (type: Exclude<InvoiceType, 'eingangsrechnung'>) => `${NUMBER_PREFIX[type]}-{YYYY}-{NNNNN}`;

/**
 * Format a number from a pattern: {YYYY}, {YY}, {MM} (month of the issue date) and one counter
 * {N…} whose length is the zero padding. The counter series stays per type and year, so a
 * pattern without {YYYY} still restarts each year — document the year in the pattern.
 */
export function formatInvoiceNumber(type: InvoiceType, year: number, counter: number, pattern?: string | null, month = 1): string {
  if (type === 'eingangsrechnung') throw new Error('incoming invoices keep the supplier number');
  if (!Number.isInteger(counter) || counter < 1) throw new Error(`invalid counter ${counter}`);
  const p = pattern || defaultNumberFormat(type);
  return p
    .replace('{YYYY}', String(year))
    .replace('{YY}', String(year % 100).padStart(2, '0'))
    .replace('{MM}', String(month).padStart(2, '0'))
    .replace(/\{(N+)\}/, (_, n: string) => String(counter).padStart(n.length, '0'));
}

export function parseInvoiceNumber(number: string): { prefix: string; year: number; counter: number } | null {
  const m = /^([A-Z]{2})-(\d{4})-(\d{5,})$/.exec(number);
  return m ? { prefix: m[1], year: Number(m[2]), counter: Number(m[3]) } : null;
}
