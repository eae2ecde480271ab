import type { Job } from 'bullmq';
import { db } from '../../../shared/db';
import { systemActor } from '../../../shared/actor';
import type { CommandContext } from '../../../shared/commands/types';
import type { ImportBankStatementPayload } from '../../../shared/jobs/catalog';
import { readBankStatement } from '../../../shared/formats/bankStatement';
import { statementForImport } from '../../../shared/queries/bankStatements';
import { importBankStatement, rejectBankStatement } from '../../../shared/commands/bankStatements/import';

/**
 * Read one uploaded bank statement, store its entries and match them (docs/bank-statements.md).
 * At least once, never twice: a final statement ends the job at once, and the import locks the
 * row and stores each entry once (unique dedup key), so a retry after a crash adds nothing that is
 * there. A file that cannot be read is rejected with the reason; a database failure is retried.
 */
export async function importBankStatementJob(job: Job<ImportBankStatementPayload>) {
  const { tenantId, statementId } = job.data;
  const actor = systemActor(tenantId);
  const run = <T>(command: (ctx: CommandContext) => Promise<T>) => db().transaction((trx) => command({ trx, actor }));

  const row = await statementForImport(db(), tenantId, statementId);
  if (!row) return { status: 'missing' };
  if (row.status === 'imported' || row.status === 'rejected') return { status: row.status, skipped: true };
  // Bounded by the readers themselves (20 MB, element and line limits); never throws on content.
  const read = readBankStatement(row.original);
  if (!read.ok) {
    await run((ctx) => rejectBankStatement(ctx, statementId, read.reason));
    return { status: 'rejected', reason: read.reason };
  }
  return run((ctx) => importBankStatement(ctx, statementId, read.statement));
}
