import { audit } from '../../audit';
import { AppError, notFound } from '../../errors';
import type { CommandContext } from '../types';
import { emitSubmissionUpdated } from './u30Upload';

/**
 * POST /api/reports/ust/submissions/:id/resolve: an admin records, from the DataBox, whether a
 * live upload whose outcome we could not learn arrived (accepted: the period is filed) or not
 * (rejected: it can be filed again). Nothing is sent to the portal, and only rows the job gave up
 * on can be resolved, so a human never overrides the portal (docs/reports.md, "Outcome unknown").
 */
export interface ResolveSubmissionInput {
  outcome: 'accepted' | 'rejected';
  note?: string;
}

export async function resolveSubmission({ trx, actor }: CommandContext, id: string, input: ResolveSubmissionInput) {
  const row = await trx('reportSubmissions').where({ tenantId: actor.tenantId, id }).forUpdate().first('id', 'period', 'mode', 'status', 'outcomeUnknown');
  if (!row) throw notFound('Submission');
  if (!(row.mode === 'live' && row.status === 'submitted' && row.outcomeUnknown)) {
    const state = `${row.mode} submission in status ${row.status}${row.outcomeUnknown ? ' (outcome unknown)' : ''}`;
    throw new AppError('INVALID_INPUT', 400, `Only a live submission whose upload outcome is unknown can be resolved by hand; this is a ${state}`, [
      { field: 'id', message: 'has no unknown outcome to resolve' },
    ]);
  }
  const note = input.note?.trim() || null;
  await trx('reportSubmissions')
    .where({ tenantId: actor.tenantId, id })
    .update({
      status: input.outcome,
      outcomeUnknown: false,
      resolvedBy: actor.userId,
      resolvedAt: trx.fn.now(),
      resolutionNote: note,
      error: `Outcome resolved by hand as ${input.outcome} after the upload's answer was lost`,
      updatedAt: trx.fn.now(),
    });
  await emitSubmissionUpdated({ trx, actor }, id);
  await audit(trx, actor, {
    action: 'vat_return.submission_resolved',
    entityType: 'report_submission',
    entityId: id,
    data: { period: row.period, outcome: input.outcome, note },
  });
}
