/**
 * PostgreSQL cannot store U+0000 in text or jsonb (text: "invalid byte sequence", jsonb:
 * "unsupported Unicode escape sequence"). Input that reaches the database must not carry it.
 */

const NUL = '\u0000';

/** The path (`items.0.description`, or `(root)`) of the first string in value holding U+0000. */
export function pathOfNul(value: unknown, path: string[] = []): string | null {
  if (typeof value === 'string') return value.includes(NUL) ? path.join('.') || '(root)' : null;
  if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      // A key is stored too (jsonb columns): it counts as its own field.
      if (key.includes(NUL)) return [...path, key].join('.');
      const found = pathOfNul(v, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}

/**
 * A copy of value with U+0000 removed from every string and key: for data we must keep although
 * it carries one (a verified webhook event; the provider would redeliver it forever otherwise).
 */
export function withoutNul<T>(value: T): T {
  if (typeof value === 'string') return (value.includes(NUL) ? value.replaceAll(NUL, '') : value) as T;
  if (Array.isArray(value)) return value.map((v) => withoutNul(v)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replaceAll(NUL, ''), withoutNul(v)])) as T;
  }
  return value;
}
