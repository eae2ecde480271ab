import { randomUUID } from 'node:crypto';
import { audit } from '../audit';
import { AppError, invalidInput } from '../errors';
import { enqueueAfterCommit } from '../outbox';
import { jobs } from '../jobs/catalog';
import { overlappingPeriodLabels, parseTaxPeriod, type TaxPeriod } from '../domain/tax/period';
import { lockKey, submissionLockKey } from '../locks';
import { assertU30Tenant, loadReportTenant, requireTaxNumber, u30Report, u30XmlFor } from '../queries/reports/vatReturn';
import type { CommandContext } from './types';

/**
 * The error of a live submission whose upload may have been filed (workers/jobs/tax-portal/submitU30.ts;
 * also written by the recovery sweep, shared/recovery.ts, for one whose job Redis lost mid-upload).
 */
export const outcomeUnknownMessage = (submissionId: string) =>
  'Upload outcome unknown (interrupted after the file was sent): check the FinanzOnline DataBox, then record what happened with ' +
  `POST /api/reports/ust/submissions/${submissionId}/resolve { "outcome": "accepted" | "rejected" }; after "rejected" the period can be filed again`;

export interface SubmitVatReturnInput {
  year: number;
  month?: number;
  quarter?: number;
  mode: 'test' | 'live';
  resubmission?: boolean;
}

/**
 * POST /api/reports/ust/submit: file the U30 of a period with FinanzOnline, in test or live mode.
 *
 * In one transaction: check the tenant (AT, tax number, portal credentials configured), compute
 * the return from the books as they are now, build the XML (the exact bytes the job will upload,
 * stored as payload), insert the report_submissions row and queue the `tax-portal` job after
 * commit (job id u30-<submissionId>). The job carries ids only; it decrypts the credentials itself.
 *
 * Live filing rules (docs/reports.md, "Live once per month"), checked under a per-tenant advisory
 * lock so concurrent requests are serialized (check and insert happen in the same transaction that
 * holds the lock; the next request's check runs after this one committed):
 * - a live submission is refused (409 DUPLICATE, naming the earlier submission) when any of its
 *   months is covered by a live submission that is queued, submitted or accepted — a month and
 *   its quarter overlap — unless it says resubmission: true (a corrected return);
 * - even a resubmission is refused while an overlapping live submission is still in flight
 *   (queued or submitted, including one whose outcome is unknown and awaits an admin's
 *   resolution): at most one live upload per month at a time.
 * The partial unique index report_submissions_live_unique stays as the last guard for the same
 * label; its violation also becomes 409 DUPLICATE.
 */
export async function submitVatReturn(
  { trx, actor }: CommandContext,
  input: SubmitVatReturnInput,
): Promise<{ submissionId: string; status: 'queued'; period: TaxPeriod }> {
  const period = parseTaxPeriod(input);
  const tenant = await loadReportTenant(trx, actor.tenantId);
  assertU30Tenant(tenant);
  requireTaxNumber(tenant, 'Submitting the U30');
  if (!tenant.portalCredentialsEnc) {
    throw invalidInput('No FinanzOnline credentials are configured: set portalCredentials (tid, benid, pin, herstellerid) with PUT /api/settings first', [
      { field: 'portalCredentials', message: 'are not configured' },
    ]);
  }
  const report = await u30Report(trx, tenant, period);
  const resubmission = input.resubmission === true;
  const submissionId = randomUUID();
  // Built before anything is stored: a return the XML cannot carry (a negative base, unassigned
  // 0 % turnover) is refused with 422 and leaves no row. The submission id goes into KUNDENINFO,
  // so the portal's protocol can be matched to this row.
  const xml = u30XmlFor(tenant, report, { customerInfo: `Submission ${submissionId.slice(0, 8)}` });

  if (input.mode === 'live') {
    // After the report is computed (the slow part), so the lock is held only for check + insert.
    await lockKey(trx, submissionLockKey(tenant.id));
    await assertNoLiveConflict(trx, tenant.id, period, resubmission);
  }
  await trx('reportSubmissions')
    .insert({
      id: submissionId,
      tenantId: tenant.id,
      kind: 'u30',
      year: period.year,
      period: period.label,
      mode: input.mode,
      status: 'queued',
      resubmission,
      payload: xml,
      createdBy: actor.userId,
    })
    .catch(async (err: { code?: string; constraint?: string }) => {
      if (err.code === '23505') {
        throw new AppError(
          'DUPLICATE',
          409,
          `The U30 for ${period.label} was already submitted live (or is being submitted); send resubmission: true to file a corrected return once it is accepted`,
          [{ field: 'resubmission', message: 'must be true to file this period live again' }],
        );
      }
      throw err;
    });
  await audit(trx, actor, {
    action: 'vat_return.submission_queued',
    entityType: 'report_submission',
    entityId: submissionId,
    data: { kind: 'u30', period: period.label, mode: input.mode, resubmission, kennzahlen: report.kennzahlen },
  });
  await enqueueAfterCommit(trx, jobs.submitU30, { tenantId: tenant.id, submissionId });
  return { submissionId, status: 'queued', period };
}

const IN_FLIGHT = ['queued', 'submitted'];

/** 409 DUPLICATE when an overlapping live submission blocks this one (rules above). */
async function assertNoLiveConflict(trx: CommandContext['trx'], tenantId: string, period: TaxPeriod, resubmission: boolean): Promise<void> {
  const blocking = resubmission ? IN_FLIGHT : [...IN_FLIGHT, 'accepted'];
  const earlier = await trx('reportSubmissions')
    .where({ tenantId, kind: 'u30', mode: 'live', year: period.year })
    .whereIn('period', overlappingPeriodLabels(period))
    .whereIn('status', blocking)
    // In-flight ones first: they are what the caller has to wait for or resolve.
    .orderByRaw("case when status = 'accepted' then 1 else 0 end, created_at")
    .first('id', 'period', 'status', 'outcomeUnknown');
  if (!earlier) return;
  const subject =
    earlier.period === period.label ? `The U30 for ${period.label} was already submitted live:` : `The U30 for ${period.label} overlaps ${earlier.period}:`;
  const ref = `live submission ${earlier.id} for ${earlier.period}`;
  let message: string;
  if (earlier.status === 'accepted') {
    message = `${subject} ${ref} was accepted by FinanzOnline; send resubmission: true to file a corrected return`;
  } else if (earlier.outcomeUnknown) {
    message =
      `${subject} the upload outcome of ${ref} is unknown; check the FinanzOnline DataBox and record what happened with ` +
      `POST /api/reports/ust/submissions/${earlier.id}/resolve before filing again`;
  } else {
    message = `${subject} ${ref} is still in flight (${earlier.status}); wait until it is accepted or rejected before filing again`;
  }
  throw new AppError(
    'DUPLICATE',
    409,
    message,
    [{ field: earlier.status === 'accepted' ? 'resubmission' : 'period', message: `conflicts with ${ref} (${earlier.status})` }],
    undefined,
    { conflictingSubmission: { id: earlier.id, period: earlier.period, status: earlier.status, outcomeUnknown: earlier.outcomeUnknown } },
  );
}
