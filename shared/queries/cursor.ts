import type { Knex } from 'knex';
import { invalidInput } from '../errors';

/**
 * The one keyset cursor of the lists (docs/lists.md): a list's order is a key of columns ending in
 * the id, so every row has a unique position; a page holds the rows after the previous page's last
 * key, found by one index range that does not depend on how deep the walk is. The cursor a client
 * sees is opaque: base64url of JSON [tag, ...key values as PostgreSQL prints them]. The tag names
 * the order, so a cursor of one list or order is refused by another. Nothing secret is in it and
 * a forged but well-formed cursor only starts elsewhere in the caller's own tenant, so it is not
 * signed; a malformed one is 400 (never a 500 from a failed cast).
 * The incremental sync's (updatedSince, afterId) is this keyset on (updated_at, id): sync.ts.
 */
export type KeyType = 'date' | 'timestamp' | 'uuid' | 'text';

export interface Keyset {
  tag: string;
  /** snake_case columns of the order, the last one the id. */
  columns: ReadonlyArray<{ column: string; type: KeyType }>;
  desc: boolean;
}

const CAST: Record<KeyType, string> = { date: 'date', timestamp: 'timestamptz', uuid: 'uuid', text: 'text' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
// timestamptz as PostgreSQL prints it (`::text`) or as ISO 8601: date, time, fraction, offset.
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}(:?\d{2})?)$/;

function validValue(type: KeyType, v: unknown): v is string {
  if (typeof v !== 'string') return false;
  switch (type) {
    case 'uuid':
      return UUID.test(v);
    case 'date':
      return DATE.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v);
    case 'timestamp': {
      if (!TIMESTAMP.test(v)) return false;
      const day = v.slice(0, 10);
      const [h, m, s] = v.slice(11, 19).split(':').map(Number);
      return validValue('date', day) && h < 24 && m < 60 && s < 60;
    }
    case 'text':
      return v.length <= 1000 && !v.includes('\u0000');
  }
}

export function encodeCursor(k: Keyset, values: readonly string[]): string {
  return Buffer.from(JSON.stringify([k.tag, ...values])).toString('base64url');
}

const bad = () => invalidInput('Query failed validation', [{ field: 'cursor', message: 'is not a cursor of this list (pass nextCursor unchanged)' }]);

/** The key values of a cursor made by encodeCursor() for this keyset; anything else is 400. */
export function decodeCursor(k: Keyset, cursor: string): string[] {
  if (cursor.length > 4000 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== k.columns.length + 1 || parsed[0] !== k.tag) throw bad();
  const values = parsed.slice(1);
  if (!values.every((v, i) => validValue(k.columns[i].type, v))) throw bad();
  return values as string[];
}

/** What applyKeyset needs of a query builder (knex's and objection's both have it). */
interface Filterable {
  whereRaw(sql: string, bindings: readonly Knex.Value[]): unknown;
}

/**
 * Restricts q to the rows after `values` in the keyset's order: one row comparison, which an
 * index on the same columns in the same direction answers as a range (Index Cond). `table`
 * qualifies the columns when the query joins.
 */
export function applyKeyset(q: Filterable, k: Keyset, values: readonly string[], table?: string): void {
  const cols = k.columns.map(() => '??').join(', ');
  const params = k.columns.map((c) => `?::${CAST[c.type]}`).join(', ');
  q.whereRaw(`(${cols}) ${k.desc ? '<' : '>'} (${params})`, [...k.columns.map((c) => (table ? `${table}.${c.column}` : c.column)), ...values]);
}

/** The keyset's order for knex's orderBy (snake_case works: wrapIdentifier maps camelCase only). */
export const keysetOrder = (k: Keyset, table?: string) =>
  k.columns.map((c) => ({ column: table ? `${table}.${c.column}` : c.column, order: k.desc ? ('desc' as const) : ('asc' as const) }));

/**
 * The select list that carries each row's key as text (`::text` round-trips every type exactly,
 * microseconds included, where a JS Date would keep milliseconds), as columns "k0", "k1", ….
 */
export const keyColumns = (k: Keyset, table?: string) => k.columns.map((c, i) => `${table ? `${table}.` : ''}${c.column}::text as "k${i}"`).join(', ');

/** The next page's cursor from the last row of this page (read with keyColumns), or null at the end. */
export function nextCursorOf(k: Keyset, rows: ReadonlyArray<Record<string, unknown>>, limit: number): string | null {
  if (rows.length <= limit) return null;
  const last = rows[limit - 1];
  return encodeCursor(
    k,
    k.columns.map((_, i) => String(last[`k${i}`])),
  );
}
