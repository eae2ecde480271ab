import type { Knex } from 'knex';
import { config } from '../../../shared/config';
import { notFound } from '../../../shared/errors';
import { invoiceViewCache as cacheOutcomes, setInvoiceViewCacheBytesSource } from '../../../shared/metrics';
import { invoiceViewVersion, loadVersionedInvoiceView } from '../../../shared/queries/invoices';
import { ByteBoundedCache } from '../../byteBoundedCache';
import { weakTag } from '../../middleware/etag';

/** One invoice's view as GET /api/invoices/:id sends it. */
export interface SerializedView {
  json: string;
  /** The weak ETag of `json`, as the etag middleware would compute it. */
  tag: string;
}

interface Entry extends SerializedView {
  /** loadVersionedInvoiceView()'s version of the rows `json` was built from. */
  version: string;
}

/** Keyed by tenant and invoice; sized in characters of JSON (one byte each for most views). */
export const invoiceViews = new ByteBoundedCache<Entry>(() => config().invoiceViewCacheMb * 1024 * 1024);
setInvoiceViewCacheBytesSource(() => invoiceViews.size.bytes);

/**
 * GET /api/invoices/:id serves the JSON it serialized earlier while the database says nothing it
 * shows has changed: checking is one indexed read of row versions, building the view most of a
 * read's cost. Every request asks the database, so a change by any process is seen at once and a
 * deleted or foreign invoice is 404 (docs/invoice-read-cache.md).
 */
export async function invoiceViewJson(db: Knex, tenantId: string, id: string): Promise<SerializedView> {
  const key = `${tenantId}/${id}`;
  const cached = invoiceViews.get(key);
  if (cached) {
    const version = await invoiceViewVersion(db, tenantId, id);
    if (version === cached.version) {
      cacheOutcomes.inc({ result: 'hit' });
      return cached;
    }
    invoiceViews.delete(key);
    if (version === null) throw notFound('Invoice');
    cacheOutcomes.inc({ result: 'stale' });
  } else {
    cacheOutcomes.inc({ result: 'miss' });
  }
  // View and version come from one statement, so the version is never newer than the view.
  const { view, version } = await loadVersionedInvoiceView(db, tenantId, id);
  const json = JSON.stringify(view);
  const entry: Entry = { json, tag: weakTag(json), version };
  invoiceViews.set(key, entry, json.length + key.length + version.length);
  return entry;
}
