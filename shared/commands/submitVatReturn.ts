import { randomUUID } from 'node:crypto';
import { audit } from '../audit';
import { AppError, invalidInput } from '../errors';
import { enqueueAfterCommit } from '../outbox';
import { QUEUES } from '../queues';
import { parseTaxPeriod, type TaxPeriod } from '../domain/tax/period';
import { assertU30Tenant, loadReportTenant, requireTaxNumber, u30Report, u30XmlFor } from '../queries/reports/vatReturn';
import type { CommandContext } from './types';

/**
 * POST /api/reports/ust/submit: file the U30 of a period with FinanzOnline, in test or live mode.
 *
 * In one transaction: check the tenant (AT, tax number, portal credentials configured), compute
 * the return from the books as they are now, build the XML (the exact bytes the job will upload,
 * stored as payload), insert the report_submissions row and queue the `tax-portal` job after
 * commit (job id u30-<submissionId>). The job carries ids only; it decrypts the credentials itself.
 *
 * A period is filed live at most once unless the request says resubmission: true (a corrected
 * return). The partial unique index report_submissions_live_unique enforces that in PostgreSQL,
 * so two concurrent requests cannot both pass; the violation becomes 409 DUPLICATE here.
 */
export const SUBMIT_U30_JOB = 'submit-u30';
export const submitJobId = (submissionId: string) => `u30-${submissionId}`;

export interface SubmitVatReturnInput {
  year: number;
  month?: number;
  quarter?: number;
  mode: 'test' | 'live';
  resubmission?: boolean;
}

export interface SubmitU30JobData {
  tenantId: string;
  submissionId: string;
}

export async function submitVatReturn({ trx, actor }: CommandContext, input: SubmitVatReturnInput): Promise<{ submissionId: string; status: 'queued'; period: TaxPeriod }> {
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
          `The U30 for ${period.label} has already been submitted live (or is being submitted); send resubmission: true to file a corrected return`,
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
  const data: SubmitU30JobData = { tenantId: tenant.id, submissionId };
  await enqueueAfterCommit(trx, { queue: QUEUES.taxPortal, name: SUBMIT_U30_JOB, jobId: submitJobId(submissionId), data: { ...data } });
  return { submissionId, status: 'queued', period };
}
