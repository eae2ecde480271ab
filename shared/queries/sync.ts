import type { Knex } from 'knex';
import { invalidInput } from '../errors';
import { applyKeyset, decodeCursor, type Keyset } from './cursor';

/**
 * Incremental sync of the invoice, customer and supplier lists (docs/sync.md). Given updatedSince
 * the list holds the rows changed at or after that time, deleted ones included (deletedAt set),
 * in (updatedAt, id) order; with afterId as well, only those strictly after the row
 * (updatedSince, afterId), so a client can page through any number of rows that share one
 * timestamp. Served by the (tenant_id, updated_at, id) index of each table (migration
 * 20261127152913), whose updated_at is kept to milliseconds so the cursor names a row exactly.
 */
export interface SyncCursor {
  updatedSince?: string;
  afterId?: string;
  /** nextCursor of the previous sync page: the same position as (updatedSince, afterId), opaque (docs/lists.md). */
  cursor?: string;
}

/** The sync order as a keyset (shared/queries/cursor.ts): nextCursor of a sync page encodes it. */
export const syncKeyset = (table: string): Keyset => ({
  tag: `${table}:sync`,
  columns: [
    { column: 'updated_at', type: 'timestamp' },
    { column: 'id', type: 'uuid' },
  ],
  desc: false,
});

export const isSync = <T extends SyncCursor>(c: T): c is T & { updatedSince: string } => c.updatedSince !== undefined;

/** afterId is a position within updatedSince's millisecond: alone it means nothing. */
export function assertCursor(c: SyncCursor): void {
  if (c.afterId !== undefined && c.updatedSince === undefined) {
    throw invalidInput('Query failed validation', [{ field: 'afterId', message: 'needs updatedSince' }]);
  }
  if (c.afterId !== undefined && c.cursor !== undefined) {
    throw invalidInput('Query failed validation', [{ field: 'cursor', message: 'replaces afterId: pass one of them' }]);
  }
}

/** What applySyncCursor needs of a query builder: knex's and objection's both have it (and change in place). */
interface Filterable {
  whereRaw(sql: string, bindings: readonly Knex.Value[]): unknown;
  where(column: string, op: string, value: Date): unknown;
}

/** Restricts q (rows of table, already filtered by tenant) to the cursor; order it by syncOrder. */
export function applySyncCursor(q: Filterable, table: string, c: SyncCursor & { updatedSince: string }): void {
  const since = new Date(c.updatedSince);
  if (Number.isNaN(since.getTime())) throw invalidInput('Query failed validation', [{ field: 'updatedSince', message: 'must be an ISO 8601 date-time' }]);
  // A cursor is the position of the previous page's last row: it replaces (updatedSince, afterId).
  if (c.cursor) applyKeyset(q, syncKeyset(table), decodeCursor(syncKeyset(table), c.cursor), table);
  else if (c.afterId) applyKeyset(q, syncKeyset(table), [since.toISOString(), c.afterId], table);
  else q.where(`${table}.updatedAt`, '>=', since);
}

/** The page size of the customer sync when no limit is given (the paged lists' default). */
export const SYNC_DEFAULT_LIMIT = 25;

export const syncOrder = [
  { column: 'updatedAt', order: 'asc' as const },
  { column: 'id', order: 'asc' as const },
];
