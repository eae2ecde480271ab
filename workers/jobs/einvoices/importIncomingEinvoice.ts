import type { Job } from 'bullmq';
import { db } from '../../../shared/db';
import { systemActor } from '../../../shared/actor';
import { logger } from '../../../shared/logger';
import type { CommandContext } from '../../../shared/commands/types';
import type { ImportIncomingEinvoicePayload } from '../../../shared/jobs/catalog';
import { readEInvoice, reconcile } from '../../../shared/formats/inbound/readEInvoice';
import { incomingForImport } from '../../../shared/queries/incomingEinvoices';
import { claimIncomingEinvoice, ImportRefused, importReadInvoice, rejectIncomingEinvoice } from '../../../shared/commands/incomingEinvoices/import';

/**
 * Read one uploaded e-invoice and book it (docs/e-invoicing-inbound.md, "Inbound API"). At least
 * once, never twice: a final row ends the job at once, the claim only takes an open row, and the
 * booking transaction locks the row and re-checks it together with the supplier's invoice number.
 * A document that cannot be booked is rejected with its reasons (no retry can change it); a
 * database failure is thrown and retried.
 */
export async function importIncomingEinvoiceJob(job: Job<ImportIncomingEinvoicePayload>) {
  const { tenantId, incomingId } = job.data;
  const actor = systemActor(tenantId);
  const run = <T>(command: (ctx: CommandContext) => Promise<T>) => db().transaction((trx) => command({ trx, actor }));

  const row = await incomingForImport(db(), tenantId, incomingId);
  if (!row) return { status: 'missing' };
  if (row.status !== 'queued' && row.status !== 'processing') return { status: row.status, skipped: true };
  if (!(await run((ctx) => claimIncomingEinvoice(ctx, incomingId)))) return { status: 'skipped', reason: 'claimed-elsewhere' };

  // Bounded by the reader itself: 5 MB of XML, 10 MB of PDF, limited inflation; it never throws on content.
  const read = await readEInvoice(row.original, row.mediaType);
  if (!read.ok) {
    await run((ctx) => rejectIncomingEinvoice(ctx, incomingId, { errors: [{ rule: 'READ', message: read.reason }] }));
    return { status: 'rejected' };
  }
  const { differences } = reconcile(read.invoice);
  if (differences.length) {
    const errors = differences.map((d) => ({ rule: d.rule, message: `${d.term}: stated ${d.stated}, computed ${d.computed}` }));
    await run((ctx) => rejectIncomingEinvoice(ctx, incomingId, { errors, warnings: read.warnings, read }));
    return { status: 'rejected' };
  }
  try {
    const outcome = await run((ctx) => importReadInvoice(ctx, incomingId, read, []));
    return outcome;
  } catch (err) {
    if (!(err instanceof ImportRefused)) throw err;
    // The booking transaction rolled back (no supplier, no invoice): only the rejection is written.
    logger.info({ incomingId, reason: err.message }, 'incoming e-invoice rejected');
    await run((ctx) => rejectIncomingEinvoice(ctx, incomingId, { errors: err.problems, warnings: read.warnings, read }));
    return { status: 'rejected' };
  }
}
