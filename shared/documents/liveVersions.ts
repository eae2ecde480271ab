import type { Knex } from 'knex';
import { Invoice } from '../models/Invoice';

/**
 * Documents are cached per (invoice, kind, version) (artifactStore.ts). A draft shows its customer
 * and seller live (a null snapshot column makes loadInvoiceView()/loadDocumentInput() read the live
 * row), so an edit of either gives every such invoice a new version in the edit's transaction;
 * finalized invoices keep theirs. The version is only the documents' cache key and ETag: no API
 * takes it back, and `updated_at` stays (the invoice itself was not edited).
 */

/**
 * Locks the invoices that show the customer live, before the customer row is locked: the invoice
 * commands lock their invoice first and the customer after (FOR SHARE), so taking the locks in
 * the same order keeps a customer edit from deadlocking with a concurrent send of its draft.
 */
export async function lockLiveCustomerInvoices(trx: Knex.Transaction, tenantId: string, customerId: string): Promise<void> {
  // Plain knex: only the row locks matter, the rows are not used.
  await trx('invoices').where({ tenantId, customerId }).whereNull('customerSnapshot').whereNull('deletedAt').orderBy('id').forUpdate().select('id');
}

/** New version for every invoice that shows this customer live (its drafts). */
export async function bumpLiveCustomerInvoices(trx: Knex.Transaction, tenantId: string, customerId: string): Promise<number> {
  return Invoice.query(trx)
    .where({ tenantId, customerId })
    .whereNull('customerSnapshot')
    .whereNull('deletedAt')
    .patch({ version: trx.raw('version + 1') });
}

/**
 * New version for every invoice whose documents show the tenant's seller data live: drafts, and
 * incoming invoices (never finalized by us, so without a seller snapshot).
 */
export async function bumpLiveSellerInvoices(trx: Knex.Transaction, tenantId: string): Promise<number> {
  // Locked in id order first, as lockLiveCustomerInvoices locks a customer's drafts: a plain
  // UPDATE locks in table order, and a customer edit racing a settings change deadlocked (500).
  // Plain knex for the locks: only the ids are used.
  const ids = (await trx('invoices').where({ tenantId }).whereNull('sellerSnapshot').whereNull('deletedAt').orderBy('id').forUpdate().select('id')).map(
    (r: { id: string }) => r.id,
  );
  if (!ids.length) return 0;
  return Invoice.query(trx)
    .where({ tenantId })
    .whereIn('id', ids)
    .patch({ version: trx.raw('version + 1') });
}
