import type { Knex } from 'knex';
import type { DocumentInput } from '../domain/invoiceView';
import { loadDocumentInput } from './invoices';

/**
 * How the caller opens the transaction for loadDocumentSnapshot: one repeatable-read snapshot,
 * or an edit between the two reads would cache old content under the new version.
 */
export const SNAPSHOT: Knex.TransactionConfig = { isolationLevel: 'repeatable read', readOnly: true };

/** An invoice's current version and the content documents of that version show. */
export interface DocumentSnapshot {
  version: number;
  input: DocumentInput;
}

/**
 * The invoice's version and document content, read in the caller's transaction (opened with
 * SNAPSHOT); null when the invoice does not exist or is deleted, or is no longer at `atVersion`
 * (then its content is not read).
 */
export async function loadDocumentSnapshot(trx: Knex.Transaction, tenantId: string, invoiceId: string, atVersion?: number): Promise<DocumentSnapshot | null> {
  const row: { version: number } | undefined = await trx('invoices').where({ tenantId, id: invoiceId }).whereNull('deletedAt').first('version');
  if (!row || (atVersion !== undefined && row.version !== atVersion)) return null;
  return { version: row.version, input: await loadDocumentInput(trx, tenantId, invoiceId) };
}
