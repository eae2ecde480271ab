/**
 * What PostgreSQL cannot store: U+0000 in any text or jsonb value, and lone surrogates in json/jsonb
 * (JSON.stringify writes them as `\ud800`, which json refuses; as a text parameter the driver
 * silently turns them into U+FFFD). Request bodies with them are refused (400). Data we must keep
 * anyway — verified webhook events, provider and tax-portal answers, audit rows, stored responses —
 * goes through storable() before it is written (docs/resilience.md, "Input the database cannot hold").
 */

const NUL = '\u0000';

/** String.prototype.isWellFormed / toWellFormed (ES2024, in Node since 20; tsconfig's lib is ES2023). */
interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}
const wellFormed = (s: string) => s as unknown as WellFormed;

/**
 * Whether any string or key in value holds U+0000. Allocates nothing but each object's key list:
 * the answer is nearly always no, and it is asked of every request body (building paths or copies
 * for that showed in the accept path's profile).
 */
export function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes(NUL);
  if (Array.isArray(value)) return value.some(hasNul);
  if (value && typeof value === 'object') {
    for (const key of Object.keys(value)) if (key.includes(NUL) || hasNul((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

/** The path (`items.0.description`, or `(root)`) of the first string in value holding U+0000. */
export function pathOfNul(value: unknown): string | null {
  return hasNul(value) ? firstNulPath(value, []) : null;
}

function firstNulPath(value: unknown, path: string[]): string | null {
  if (typeof value === 'string') return value.includes(NUL) ? path.join('.') || '(root)' : null;
  if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      // A key is stored too (jsonb columns): it counts as its own field.
      if (key.includes(NUL)) return [...path, key].join('.');
      const found = firstNulPath(v, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}

const storableString = (s: string) => !s.includes(NUL) && wellFormed(s).isWellFormed();

/**
 * Whether PostgreSQL stores value as it is (text, or jsonb after JSON.stringify): no string or key
 * holds U+0000 or a lone surrogate. Like hasNul, it allocates nothing but key lists: it is asked
 * of every verified webhook event.
 */
export function isStorable(value: unknown): boolean {
  if (typeof value === 'string') return storableString(value);
  if (Array.isArray(value)) return value.every(isStorable);
  if (value && typeof value === 'object') {
    for (const key of Object.keys(value)) if (!storableString(key) || !isStorable((value as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/**
 * value as PostgreSQL can store it: U+0000 removed and every lone surrogate replaced by U+FFFD
 * (what the UTF-8 encoding of a text parameter does anyway), in every string and key. value
 * itself when it needs no change (compare by identity to learn whether it did); otherwise a copy,
 * value left as it was. A copy is plain data, as JSON.stringify sees it (toJSON applied).
 */
export function storable<T>(value: T): T {
  return isStorable(value) ? value : cleaned(value);
}

function cleaned<T>(value: T): T {
  if (typeof value === 'string') return wellFormed(value.replaceAll(NUL, '')).toWellFormed() as T;
  if (Array.isArray(value)) return value.map((v) => cleaned(v)) as T;
  if (value && typeof value === 'object') {
    // A Date, a Decimal: what JSON.stringify would write of it.
    const toJSON = (value as { toJSON?: () => unknown }).toJSON;
    if (typeof toJSON === 'function') return cleaned(toJSON.call(value)) as T;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [cleaned(k), cleaned(v)])) as T;
  }
  return value;
}

/** JSON text for a json/jsonb column: JSON.stringify of storable(value). */
export const storableJson = (value: unknown): string => JSON.stringify(storable(value));
