/**
 * PostgreSQL cannot store U+0000 in text or jsonb (text: "invalid byte sequence", jsonb:
 * "unsupported Unicode escape sequence"). Input that reaches the database must not carry it.
 */

const NUL = '\u0000';

/**
 * Whether any string or key in value holds U+0000. Allocates nothing but each object's key list:
 * the answer is nearly always no, and it is asked of every request body and every verified
 * webhook event (building paths or copies for that showed in the accept path's profile).
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

/**
 * value with U+0000 removed from every string and key: for data we must keep although it carries
 * one (a verified webhook event; the provider would redeliver it forever otherwise). value itself
 * when it holds none; otherwise a copy, value left as it was.
 */
export function withoutNul<T>(value: T): T {
  return hasNul(value) ? stripNul(value) : value;
}

function stripNul<T>(value: T): T {
  if (typeof value === 'string') return value.replaceAll(NUL, '') as T;
  if (Array.isArray(value)) return value.map((v) => stripNul(v)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replaceAll(NUL, ''), stripNul(v)])) as T;
  }
  return value;
}
