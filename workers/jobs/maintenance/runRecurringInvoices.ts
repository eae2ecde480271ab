import type { Job } from 'bullmq';
import { now } from '../../../shared/clock';
import { billNextRecurringPeriod, recordRecurringFailure } from '../../../shared/commands/recurringInvoices';
import { db } from '../../../shared/db';
import { todayVienna } from '../../../shared/domain/dates';
import { AppError } from '../../../shared/errors';
import type { RunRecurringInvoicesPayload } from '../../../shared/jobs/catalog';
import { logger } from '../../../shared/logger';
import { runInTransaction } from '../../../shared/outbox';
import { dueRecurringInvoices } from '../../../shared/queries/recurringInvoices';

/** What lastError says: the API's message and the fields it names, never a stack. */
function describe(err: unknown): string {
  if (err instanceof AppError) {
    const fields = err.details?.map((d) => `${d.field}: ${d.message}`).join('; ');
    return `${err.code}: ${err.message}${fields ? ` (${fields})` : ''}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * Bill every due period of every active template, one period per transaction
 * (billNextRecurringPeriod), each template until nothing is due: a template that starts in the
 * past catches up in one run. A template that fails keeps its reason in lastError and the others
 * go on; the job then fails, so BullMQ retries it with backoff (and the next daily run tries again).
 */
export async function runRecurringInvoicesJob(job: Job<RunRecurringInvoicesPayload>) {
  const asOf = job.data.asOf ?? todayVienna(now());
  const due = await dueRecurringInvoices(db(), asOf, job.data.tenantId);
  let billed = 0;
  const failed: string[] = [];
  for (const t of due) {
    try {
      for (;;) {
        const result = await runInTransaction((trx) => billNextRecurringPeriod({ trx }, { tenantId: t.tenantId, id: t.id, asOf }));
        if (result === null) break;
        if (result !== 'skipped') billed++;
      }
    } catch (err) {
      failed.push(t.id);
      const message = describe(err);
      logger.warn({ tenantId: t.tenantId, recurringInvoiceId: t.id, err: message }, 'recurring invoice: a period could not be billed');
      await runInTransaction((trx) => recordRecurringFailure({ trx }, { tenantId: t.tenantId, id: t.id, message }));
    }
  }
  if (failed.length) throw new Error(`recurring invoices: ${failed.length} template(s) failed, see their lastError (${failed.join(', ')})`);
  return { asOf, templates: due.length, billed };
}
