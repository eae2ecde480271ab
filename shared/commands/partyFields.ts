import type { ErrorDetail } from '../errors';
import { isValidVatId, normalizeVatId } from '../domain/vatId';

/**
 * The common part of cleaning a customer's or supplier's fields: only the given fields, strings
 * trimmed, empty optional strings stored as null, name required non-empty, VAT ID checked
 * against its country's format and normalised, e-mail lower-cased, country upper-cased.
 */
export function cleanPartyFields<T extends object>(input: T, fields: (keyof T)[], details: ErrorDetail[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (!(f in input)) continue;
    let v = input[f] as unknown;
    if (typeof v === 'string') v = v.trim();
    if (v === '' && f !== 'name') v = null;
    out[f as string] = v;
  }
  if ('name' in out && (typeof out.name !== 'string' || !out.name)) details.push({ field: 'name', message: 'must not be empty' });
  if (typeof out.vatId === 'string') {
    if (!isValidVatId(out.vatId))
      details.push({ field: 'vatId', message: 'must be an EU VAT ID in the format of its country prefix, e.g. ATU12345678 or DE123456789' });
    else out.vatId = normalizeVatId(out.vatId);
  }
  if (typeof out.email === 'string') out.email = out.email.toLowerCase();
  if (typeof out.country === 'string') out.country = out.country.toUpperCase();
  return out;
}
