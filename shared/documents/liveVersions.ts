import type { Knex } from 'knex';

/**
 * Rendered documents are cached per (invoice, kind, version) (artifactStore.ts). A draft shows
 * its customer and its seller (the tenant) live, so an edit of either changes the draft's
 * document without touching the invoice: these give every invoice that reads the edited row
 * live a new version, in the transaction of the edit. A snapshot column that is null is exactly
 * what makes loadInvoiceView()/loadDocumentInput() read the live row, so that is the condition;
 * finalized invoices have their snapshots and keep their version (and documents).
 *
 * The version is only the cache key of documents (and their ETag, `"<kind>-<id>-v<version>"`);
 * no API accepts it back (no If-Match, no expectedVersion), and a render job for the old version
 * finds it stale and stores nothing, so the API asks again for the new one. `updated_at` stays:
 * the invoice itself was not edited.
 */

/**
 * Locks the invoices that show the customer live, before the customer row is locked: the invoice
 * commands lock their invoice first and the customer after (FOR SHARE), so taking the locks in
 * the same order keeps a customer edit from deadlocking with a concurrent send of its draft.
 */
export async function lockLiveCustomerInvoices(trx: Knex.Transaction, tenantId: string, customerId: string): Promise<void> {
  await trx('invoices').where({ tenantId, customerId }).whereNull('customerSnapshot').whereNull('deletedAt').orderBy('id').forUpdate().select('id');
}

/** New version for every invoice that shows this customer live (its drafts). */
export async function bumpLiveCustomerInvoices(trx: Knex.Transaction, tenantId: string, customerId: string): Promise<number> {
  return trx('invoices')
    .where({ tenantId, customerId })
    .whereNull('customerSnapshot')
    .whereNull('deletedAt')
    .update({ version: trx.raw('version + 1') });
}

/**
 * New version for every invoice whose documents show the tenant's seller data live: drafts, and
 * incoming invoices (never finalized by us, so without a seller snapshot).
 */
export async function bumpLiveSellerInvoices(trx: Knex.Transaction, tenantId: string): Promise<number> {
  // Locked in id order first, as lockLiveCustomerInvoices locks a customer's drafts: a plain
  // UPDATE locks in table order, and a customer edit racing a settings change deadlocked (500).
  const ids = (await trx('invoices').where({ tenantId }).whereNull('sellerSnapshot').whereNull('deletedAt').orderBy('id').forUpdate().select('id')).map(
    (r: { id: string }) => r.id,
  );
  if (!ids.length) return 0;
  return trx('invoices')
    .where({ tenantId })
    .whereIn('id', ids)
    .update({ version: trx.raw('version + 1') });
}
