import type { Job } from 'bullmq';
import { db } from '../../../shared/db';
import { runInTransaction } from '../../../shared/outbox';
import { enqueue } from '../../../shared/queues';
import { jobs, type RunDunningPayload } from '../../../shared/jobs/catalog';
import { systemActor } from '../../../shared/actor';
import { now } from '../../../shared/clock';
import { todayVienna } from '../../../shared/domain/dates';
import { AppError } from '../../../shared/errors';
import { logger } from '../../../shared/logger';
import { issueDunningNotice } from '../../../shared/commands/dunning';
import { dunningProposals, tenantsWithAutomaticDunning } from '../../../shared/queries/dunning';

/**
 * The daily fan-out (docs/dunning.md): one run-dunning job per tenant with automatic dunning, its
 * id keyed by tenant and day (shared/jobs/catalog.ts), so workers that fan out together, or a
 * fan-out retried, add each tenant's run once. The day is the service clock's, in Vienna.
 */
export async function dunningDailyJob() {
  const day = todayVienna(now());
  const tenants = await tenantsWithAutomaticDunning(db());
  for (const tenantId of tenants) await enqueue(jobs.runDunning, { tenantId, day });
  return { day, tenants: tenants.length };
}

/**
 * One tenant's run: the notices due on its day, each issued in its own transaction (one invoice
 * whose interest cannot be computed does not hold up the others). Idempotent: an invoice issued
 * already is not due for that level any more, and a concurrent run waits on the invoice's lock.
 * Only with automatic dunning: otherwise the notices wait as proposals for review.
 */
export async function runDunningJob(job: Job<RunDunningPayload>) {
  const { tenantId, day } = job.data;
  const actor = systemActor(tenantId);
  const tenant = await db()('tenants').where({ id: tenantId }).first('settings');
  const settings = tenant?.settings?.dunning;
  if (!settings?.enabled || !settings.automatic) return { skipped: 'automatic dunning is off' };
  const due = await dunningProposals(db(), tenantId, day);
  let issued = 0;
  const refused: string[] = [];
  for (const p of due) {
    try {
      // runInTransaction: the notice's e-mail job goes to its queue right after the commit.
      const notice = await runInTransaction((trx) => issueDunningNotice({ trx, actor }, { invoiceId: p.invoiceId, asOf: day, ifDue: true }));
      if (notice) issued++;
    } catch (err) {
      // A refusal of this invoice (AppError) stays with it; anything else fails the run for a retry.
      if (!(err instanceof AppError)) throw err;
      refused.push(p.invoiceNumber);
      logger.warn({ tenantId, invoiceId: p.invoiceId, reason: err.message }, 'dunning notice refused');
    }
  }
  return { day, due: due.length, issued, refused };
}
