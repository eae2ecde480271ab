import { createHash } from 'node:crypto';
import { audit } from '../../audit';
import { enqueueAfterCommit } from '../../outbox';
import { jobs } from '../../jobs/catalog';
import { IncomingEinvoice, type IncomingEinvoiceStatus } from '../../models/IncomingEinvoice';
import { earlierUploadOfSameFile } from '../../queries/incomingEinvoices';
import type { CommandContext } from '../types';

/**
 * Store an uploaded e-invoice, byte for byte, and queue its import (through the outbox: a
 * rollback leaves no job, a commit never loses one). The same file again (same sha256 in this
 * tenant, not rejected) is stored too, as a duplicate of the earlier upload, and not imported.
 */
export async function receiveIncomingEinvoice(
  { trx, actor }: CommandContext,
  input: { bytes: Buffer; mediaType: string; supplierIdHint: string | null },
): Promise<{ id: string; status: IncomingEinvoiceStatus }> {
  const tenantId = actor.tenantId;
  const sha256 = createHash('sha256').update(input.bytes).digest('hex');
  // Two uploads of one file at once: the second waits here and sees the first as its earlier upload.
  await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`incoming-einvoice:${tenantId}:${sha256}`]);
  const earlier = await earlierUploadOfSameFile(trx, tenantId, sha256);
  const row = await IncomingEinvoice.query(trx)
    .insert({
      tenantId,
      status: earlier ? 'duplicate' : 'queued',
      duplicateOf: earlier?.id ?? null,
      invoiceId: earlier?.invoiceId ?? null,
      original: input.bytes,
      mediaType: input.mediaType,
      sha256,
      size: input.bytes.length,
      supplierIdHint: input.supplierIdHint,
      errors: [],
      warnings: earlier ? ['the same file was uploaded before'] : [],
      processedAt: earlier ? (trx.fn.now() as never) : null,
    })
    .returning(['id', 'status']);
  await audit(trx, actor, {
    action: 'incoming_einvoice.received',
    entityType: 'incoming_einvoice',
    entityId: row.id,
    data: { sha256, size: input.bytes.length, duplicateOf: earlier?.id ?? null },
  });
  if (!earlier) await enqueueAfterCommit(trx, jobs.importIncomingEinvoice, { tenantId, incomingId: row.id });
  return { id: row.id, status: row.status };
}
