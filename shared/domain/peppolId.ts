/**
 * Electronic addresses of a party (BT-34 / BT-49, the Peppol participant id): an ISO 6523 ICD /
 * CEF EAS scheme and the id under it. The allow-list holds the schemes our customers use in AT and
 * DE; an id is checked where its scheme has a simple rule (docs/e-invoicing.md, "Electronic addresses").
 */
import { isValidVatId, normalizeVatId, vatIdCountry } from './vatId';

export interface PeppolId {
  scheme: string;
  id: string;
}

/** Leitweg-ID: coarse address (2–12 digits), optional fine address (≤ 30 letters/digits), 2 check digits. */
const LEITWEG_RE = /^[0-9]{2,12}(-[0-9A-Z]{1,30})?-[0-9]{2}$/;

/** ISO 7064 Mod 97-10 over the Leitweg-ID without hyphens (letters A=10 … Z=35): remainder 1. */
function leitwegChecksumOk(id: string): boolean {
  const digits = id.replace(/-/g, '').replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let rest = 0;
  for (const d of digits) rest = (rest * 10 + Number(d)) % 97;
  return rest === 1;
}

const vatIdOf = (prefix: string) => (id: string) =>
  isValidVatId(id) && normalizeVatId(id).startsWith(prefix) ? null : `must be a ${prefix} VAT ID, e.g. ${prefix === 'AT' ? 'ATU12345678' : 'DE123456789'}`;

/** Scheme → a check of the id (null: fine) and what it is. */
export const PEPPOL_SCHEMES: Record<string, { label: string; check: (id: string) => string | null }> = {
  '0204': {
    label: 'Leitweg-ID (German public administration)',
    check: (id) =>
      !LEITWEG_RE.test(id)
        ? 'must be a Leitweg-ID: 2–12 digits, optionally "-" and up to 30 letters or digits, then "-" and 2 check digits, e.g. 04011000-12345-03'
        : leitwegChecksumOk(id)
          ? null
          : 'is not a valid Leitweg-ID: the check digits do not match',
  },
  '9930': { label: 'German VAT ID', check: vatIdOf('DE') },
  '9914': { label: 'Austrian VAT ID', check: vatIdOf('AT') },
  '9915': {
    label: 'Austrian government (Verwaltungskennzeichen)',
    check: (id) => (/^[A-Za-z0-9:.-]{1,50}$/.test(id) ? null : 'must be 1–50 letters, digits or : . -'),
  },
  '0088': {
    label: 'GLN (GS1 Global Location Number)',
    check: (id) => (/^[0-9]{13}$/.test(id) && gs1CheckDigitOk(id) ? null : 'must be a 13-digit GLN with a valid check digit'),
  },
  '0060': { label: 'DUNS number', check: (id) => (/^[0-9]{9}$/.test(id) ? null : 'must be a 9-digit DUNS number') },
  '0007': { label: 'Swedish organisation number', check: (id) => (/^[0-9]{10}$/.test(id) ? null : 'must be a 10-digit organisation number') },
  '9925': { label: 'Belgian VAT ID', check: vatIdOf('BE') },
  '9944': { label: 'Dutch VAT ID', check: vatIdOf('NL') },
  '0208': { label: 'Belgian enterprise number', check: (id) => (/^[0-9]{10}$/.test(id) ? null : 'must be a 10-digit enterprise number') },
};

function gs1CheckDigitOk(id: string): boolean {
  const digits = [...id].map(Number);
  const check = digits.pop()!;
  const sum = digits.reverse().reduce((s, d, i) => s + d * (i % 2 === 0 ? 3 : 1), 0);
  return (10 - (sum % 10)) % 10 === check;
}

/** The normalised id (trimmed; VAT IDs and Leitweg-IDs upper-cased), or the problems per field. */
export function checkPeppolId(value: PeppolId, field: string): { value: PeppolId } | { details: { field: string; message: string }[] } {
  const scheme = String(value.scheme ?? '').trim();
  const rule = PEPPOL_SCHEMES[scheme];
  if (!rule) return { details: [{ field: `${field}.scheme`, message: `must be one of ${Object.keys(PEPPOL_SCHEMES).join(', ')} (ISO 6523 ICD / EAS code)` }] };
  let id = String(value.id ?? '').trim();
  if (['0204', '9930', '9914', '9925', '9944'].includes(scheme)) id = id.toUpperCase().replace(/\s+/g, '');
  const problem = rule.check(id);
  if (problem) return { details: [{ field: `${field}.id`, message: `${problem} (scheme ${scheme}: ${rule.label})` }] };
  return { value: { scheme, id: scheme === '9930' || scheme === '9914' ? normalizeVatId(id) : id } };
}

/** The electronic address a VAT ID gives when nothing else is stored: 9914 for AT, 9930 for DE. */
export function peppolIdFromVatId(vatId: string | null | undefined): PeppolId | null {
  if (!vatId) return null;
  const normalized = normalizeVatId(vatId);
  if (!normalized) return null;
  const country = vatIdCountry(normalized);
  if (country === 'AT') return { scheme: '9914', id: normalized };
  if (country === 'DE') return { scheme: '9930', id: normalized };
  return null;
}
