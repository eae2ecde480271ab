import { UnrecoverableError, type Job } from 'bullmq';
import { db } from '../../../shared/db';
import { artifactStore } from '../../../shared/documents/artifactStore';
import { refusalReason, renderDocument } from '../../../shared/documents/renderDocument';
import { renderEInvoiceView } from '../../../shared/documents/einvoiceView';
import { EInvoiceExportError } from '../../../shared/formats/cii/einvoiceModel';
import { CONTENT_TYPES } from '../../../shared/documents/kinds';
import { loadDocumentSnapshot, SNAPSHOT } from '../../../shared/queries/documentSnapshot';
import { originalOfInvoice } from '../../../shared/queries/incomingEinvoices';
import { logger } from '../../../shared/logger';
import type { RenderInvoiceDocumentPayload } from '../../../shared/jobs/catalog';

/**
 * Render one document for one invoice version and store it. Idempotent: an existing artifact
 * ends the job at once; a job for a version that is no longer current does nothing (the API
 * asks for the current version again). The invoice is read in one repeatable-read snapshot, so
 * the content rendered is exactly the content of the version it is stored under. The PDF of an
 * incoming invoice imported from an e-invoice is the rendering of its stored original.
 */
export async function renderInvoiceDocumentJob(job: Job<RenderInvoiceDocumentPayload>) {
  const { tenantId, invoiceId, kind, version } = job.data;
  const key = { tenantId, invoiceId, kind, version };
  if (await artifactStore.has(key)) return { cached: true };
  const snapshot = await readSnapshot(tenantId, invoiceId, kind, version);
  if (!snapshot) return { stale: true };
  let bytes: Buffer | null = null;
  try {
    if (snapshot.original) {
      bytes = await renderEInvoiceView(snapshot.original);
      if (!bytes) logger.warn({ tenantId, invoiceId }, 'the stored e-invoice no longer reads; rendering the booked invoice');
    }
    bytes ??= await renderDocument(kind, snapshot.input);
  } catch (err) {
    // The invoice's data breaks an e-invoice rule: no retry can change that; the API answers 400.
    if (err instanceof EInvoiceExportError) throw new UnrecoverableError(refusalReason(err));
    throw err;
  }
  await artifactStore.put(key, bytes, CONTENT_TYPES[kind]);
  return { bytes: bytes.length };
}

/**
 * The invoice at `version` and, for the PDF of an incoming invoice, its stored original. The
 * invoice is one statement and so one snapshot by itself: no transaction for it (BEGIN and COMMIT
 * were two more round trips per job). Only an incoming invoice's PDF reads its original too, and
 * then reads both again in one repeatable-read transaction.
 */
async function readSnapshot(tenantId: string, invoiceId: string, kind: RenderInvoiceDocumentPayload['kind'], version: number) {
  const found = await loadDocumentSnapshot(db(), tenantId, invoiceId, version);
  if (!found || kind !== 'pdf' || found.input.invoice.type !== 'eingangsrechnung') return found && { ...found, original: null };
  return db().transaction(async (trx) => {
    const again = await loadDocumentSnapshot(trx, tenantId, invoiceId, version);
    return again && { ...again, original: await originalOfInvoice(trx, tenantId, invoiceId) };
  }, SNAPSHOT);
}
