import { db } from '../db';
import { artifactStore } from './artifactStore';
import type { DocumentKind } from './kinds';
import { jobs } from '../jobs/catalog';
import { assertRenderable, refusalFrom } from './renderDocument';
import { JobWaitTimeout, runAndWait } from '../queues';
import { AppError, notFound, serviceUnavailable } from '../errors';
import { loadInvoiceView } from '../queries/invoices';
import { logger } from '../logger';
import type { InvoiceView } from '../domain/invoiceView';
import type { Config } from '../config';

/**
 * The API side of rendering: serve the cached artifact of the invoice's current version, or queue
 * the render job (business-key id, so concurrent requests share one) and wait for it a bounded
 * time (runAndWait in shared/queues.ts). Past that: 503 with a Retry-After from the job's state;
 * the job keeps running and the next request finds the artifact or joins the job.
 */
export async function obtainDocument(
  tenantId: string,
  invoiceId: string,
  kind: DocumentKind,
  waitMs: number,
  /** The serving app's configuration (its view of the workers' lock, for Retry-After). */
  cfg?: Config,
): Promise<{ content: Buffer; invoice: InvoiceView; version: number }> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const row = await db()('invoices').where({ tenantId, id: invoiceId }).whereNull('deletedAt').first('version');
    if (!row) throw notFound('Invoice');
    const invoice = await loadInvoiceView(db(), tenantId, invoiceId);
    if (!invoice) throw notFound('Invoice');
    assertRenderable(kind, invoice);
    const key = { tenantId, invoiceId, kind, version: row.version as number };
    const cached = await artifactStore.get(key);
    if (cached) return { content: cached, invoice, version: key.version };

    let waited: Awaited<ReturnType<typeof runAndWait>>;
    try {
      waited = await runAndWait(jobs.renderInvoiceDocument, key, waitMs, {
        settled: () => artifactStore.has(key),
        cfg,
      });
    } catch (err) {
      if (err instanceof JobWaitTimeout) throw serviceUnavailable('The document is still being rendered; retry shortly', err.retryAfterSeconds);
      if (err instanceof AppError) throw err;
      const refused = refusalFrom((err as Error).message ?? '');
      if (refused) {
        // The same data gives the same refusal; the failed job is removed so that a request after
        // a change (a new version renders under a new job id anyway) does not meet a stale one.
        await (err as { job?: { remove: () => Promise<void> } }).job?.remove().catch(() => undefined);
        throw refused;
      }
      // A failed render is our bug, not the client's: remove the failed job so a later request
      // retries instead of meeting the same failure until it expires.
      logger.error({ invoiceId, kind, err: (err as Error).message }, 'document rendering failed');
      await (err as { job?: { remove: () => Promise<void> } }).job?.remove().catch(() => undefined);
      throw new AppError('INTERNAL_ERROR', 500, 'The document could not be rendered');
    }
    const content = await artifactStore.get(key);
    if (content) return { content, invoice, version: key.version };
    // The job finished without storing this version's document. Either the draft changed meanwhile
    // (the job found a newer version: go again with it), or the version is unchanged and the
    // finished job is one whose answer does not hold for it (a completed job is kept for an hour
    // under its id, and joining it would answer at once, every time): remove it and render anew.
    const now = await db()('invoices').where({ tenantId, id: invoiceId }).whereNull('deletedAt').first('version');
    if (now?.version === key.version) {
      logger.warn({ invoiceId, kind, version: key.version, result: waited.result }, 'render job finished without storing the document; rendering again');
      await waited.job.remove().catch(() => undefined);
    }
  }
  throw serviceUnavailable('The invoice is changing while it is rendered; retry shortly', 1);
}
