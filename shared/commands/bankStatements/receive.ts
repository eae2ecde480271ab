import { createHash } from 'node:crypto';
import { audit } from '../../audit';
import { AppError } from '../../errors';
import { sniffBankStatement } from '../../formats/bankStatement';
import { enqueueAfterCommit } from '../../outbox';
import { jobs } from '../../jobs/catalog';
import { BankStatement, type BankStatementStatus } from '../../models/BankStatement';
import type { CommandContext } from '../types';

/**
 * Store an uploaded bank statement, byte for byte, and queue its import through the outbox (a
 * rollback leaves no job). The same file twice is imported twice, harmlessly: every entry is
 * stored once (docs/bank-statements.md, "Deduplication"), so the second reports only duplicates.
 */
export async function receiveBankStatement(
  { trx, actor }: CommandContext,
  input: { bytes: Buffer; mediaType: string },
): Promise<{ id: string; status: BankStatementStatus }> {
  const tenantId = actor.tenantId;
  // Only the first bytes: what is plainly neither format is refused now, the rest by the import job.
  if (!sniffBankStatement(input.bytes)) {
    throw new AppError('INVALID_INPUT', 415, 'The file is neither a camt.053 XML statement nor an MT940 statement');
  }
  const sha256 = createHash('sha256').update(input.bytes).digest('hex');
  const row = await BankStatement.query(trx)
    .insert({ tenantId, status: 'queued', original: input.bytes, mediaType: input.mediaType, sha256, size: input.bytes.length, warnings: [], flags: [] })
    .returning(['id', 'status']);
  await audit(trx, actor, { action: 'bank_statement.received', entityType: 'bank_statement', entityId: row.id, data: { sha256, size: input.bytes.length } });
  await enqueueAfterCommit(trx, jobs.importBankStatement, { tenantId, statementId: row.id });
  return { id: row.id, status: row.status };
}
