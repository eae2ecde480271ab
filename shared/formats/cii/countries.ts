import { EU_VAT_ID_PREFIXES } from '../../domain/vatId';

/**
 * Country codes as the e-invoices need them: EU membership by VAT prefix, German country names
 * (ebInterface) and the country of a VAT identifier.
 */

/** EU member states by the country code used in VAT identifiers ("EL" is Greece). */
export const EU_VAT_PREFIXES: ReadonlySet<string> = new Set(EU_VAT_ID_PREFIXES);

/** German display names (ebInterface wants a country name next to the code). */
const COUNTRY_NAMES_DE: Record<string, string> = {
  AT: 'Österreich',
  DE: 'Deutschland',
  CH: 'Schweiz',
  LI: 'Liechtenstein',
  IT: 'Italien',
  FR: 'Frankreich',
  NL: 'Niederlande',
  BE: 'Belgien',
  LU: 'Luxemburg',
  CZ: 'Tschechien',
  SK: 'Slowakei',
  HU: 'Ungarn',
  SI: 'Slowenien',
  PL: 'Polen',
  ES: 'Spanien',
  PT: 'Portugal',
  DK: 'Dänemark',
  SE: 'Schweden',
  FI: 'Finnland',
  IE: 'Irland',
  GR: 'Griechenland',
  HR: 'Kroatien',
  RO: 'Rumänien',
  BG: 'Bulgarien',
  EE: 'Estland',
  LV: 'Lettland',
  LT: 'Litauen',
  MT: 'Malta',
  CY: 'Zypern',
  GB: 'Vereinigtes Königreich',
  NO: 'Norwegen',
  US: 'Vereinigte Staaten',
};

export function countryNameDe(code: string): string {
  return COUNTRY_NAMES_DE[code] ?? code;
}

/** "ATU 123-456.78" → "ATU12345678". */
export function normalizeVatId(vatId: string | null | undefined): string | null {
  if (!vatId) return null;
  const v = vatId.replace(/[\s.\-/]/g, '').toUpperCase();
  return v === '' ? null : v;
}

/** ISO country of a VAT id; the Greek "EL" prefix maps to "GR". */
export function vatIdCountry(vatId: string | null | undefined): string | null {
  const v = normalizeVatId(vatId);
  if (!v || !/^[A-Z]{2}/.test(v)) return null;
  const prefix = v.slice(0, 2);
  return prefix === 'EL' ? 'GR' : prefix;
}

export function isIsoCountry(code: string | null | undefined): code is string {
  return !!code && /^[A-Z]{2}$/.test(code);
}
