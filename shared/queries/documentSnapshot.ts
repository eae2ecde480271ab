import type { Knex } from 'knex';
import type { DocumentInput } from '../domain/invoiceView';
import type { Db } from '../db';
import { loadDocumentRow } from './invoices';

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
 * The invoice's version and document content; null when the invoice does not exist or is deleted,
 * or is no longer at `atVersion`. One statement, so one snapshot by itself: a caller that reads
 * nothing else passes the pool; one that reads more for the same document passes its transaction
 * (opened with SNAPSHOT).
 */
export async function loadDocumentSnapshot(trx: Db, tenantId: string, invoiceId: string, atVersion?: number): Promise<DocumentSnapshot | null> {
  // Version and content come from one statement, so they are of one snapshot anyway.
  const found = await loadDocumentRow(trx, tenantId, invoiceId);
  if (!found || (atVersion !== undefined && found.version !== atVersion)) return null;
  return found;
}
