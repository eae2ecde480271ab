import { db } from '../db';

/**
 * Whether a row a recovery sweep selected as stale is still in one of `statuses`, read again after
 * its job was looked at: a job that finished in between (jobs complete after their transaction
 * commits) left the row done, not stuck.
 */
export const stillIn = (table: string, row: { id: string; tenantId: string }, statuses: readonly string[]) => async (): Promise<boolean> =>
  Boolean(await db()(table).where({ id: row.id, tenantId: row.tenantId }).whereIn('status', statuses).first('id'));
