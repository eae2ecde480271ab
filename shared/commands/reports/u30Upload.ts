import type { Knex } from 'knex';
import { storable, storableJson } from '../../storable';
import type { PortalError } from '../../providers/finanzonline';
import { loadPortalCredentialsEnc, loadSubmission, loadSubmissionToUpload, type SubmissionStatus } from '../../queries/reports/submissions';
import { emitEvent } from '../outboundWebhooks/emitEvent';
import { outcomeUnknownMessage } from '../submitVatReturn';
import type { CommandContext } from '../types';

/**
 * The transitions of a U30 submission's upload, made by its job (workers/jobs/tax-portal/submitU30.ts),
 * each committed on its own; the portal is called between them, outside any transaction.
 *
 *   queued ──claim──▶ submitted ──rc 0──▶ accepted
 *     ▲                   │
 *     └──── requeue ──────┘          (the portal proved it did not take the file)
 *   queued | submitted ──reject──▶ rejected        (permanent refusal, retries exhausted)
 *   submitted, live ──▶ outcomeUnknown: true        (may be filed: never uploaded again; an admin
 *                                                    resolves it, ./resolveSubmission.ts)
 *
 * FinanzOnline has no idempotency key, so a live submission found still `submitted` is never
 * uploaded again; test uploads file nothing and are simply repeated. Every write names the states
 * it may leave, so a late or second run of the job never overwrites a final state: accepted,
 * rejected, or an admin's resolution. docs/reports.md, "Idempotency and the crash window".
 */

type Mode = 'test' | 'live';

/** What a run reports when it ends without throwing (every member has `status`, so callers can read it). */
export type U30RunResult =
  | { missing: true; status?: undefined }
  | { status: SubmissionStatus | 'missing'; alreadyDone: true }
  | { status: 'submitted'; outcomeUnknown: true }
  | { status: 'accepted' };

/** How a failed run ends: thrown again for BullMQ's retry, or for good with `message`. */
export type U30Verdict = { retry: true } | { retry: false; message: string; outcomeUnknown?: true };

/** The attempt that failed and where. */
export interface U30Failure {
  mode: Mode;
  phase: 'login' | 'upload';
  /** 1 for the job's first attempt. */
  attempt: number;
  lastAttempt: boolean;
}

const submissionIn = ({ trx, actor }: CommandContext, submissionId: string, from: SubmissionStatus[]): Knex.QueryBuilder =>
  trx('reportSubmissions').where({ tenantId: actor.tenantId, id: submissionId }).whereIn('status', from);

/** Errors quote the portal's answers: storable (shared/storable.ts), as its stored answer is. */
const changes = ({ trx }: CommandContext, patch: Record<string, unknown>) => ({
  ...patch,
  ...(typeof patch.error === 'string' ? { error: storable(patch.error) } : {}),
  updatedAt: trx.fn.now(),
});

const move = async (ctx: CommandContext, submissionId: string, from: SubmissionStatus[], patch: Record<string, unknown>): Promise<number> => {
  const moved = await submissionIn(ctx, submissionId, from).update(changes(ctx, patch));
  if (moved && ('status' in patch || 'outcomeUnknown' in patch)) await emitSubmissionUpdated(ctx, submissionId);
  return moved;
};

/** report.submission.updated: a submission's status (or its outcome-unknown mark) changed; the object is GET …/submissions/:id's. */
export const emitSubmissionUpdated = (ctx: CommandContext, submissionId: string) =>
  emitEvent(ctx, 'report.submission.updated', () => loadSubmission(ctx.trx, ctx.actor.tenantId, submissionId));

/**
 * The states a run may still find before its upload: a live row is only ever claimed from queued;
 * a test upload files nothing, so a test row left submitted is simply uploaded again.
 */
const beforeUpload = (mode: Mode): SubmissionStatus[] => (mode === 'live' ? ['queued'] : ['queued', 'submitted']);

/**
 * Failures that prove the file was not taken: the fileupload service's own answer (an rc) or a
 * request we refused to send. Anything else after the request left (timeout, dropped connection,
 * HTTP 5xx, HTML page, SOAP Server fault — a proxy answers those as readily as the service) may
 * follow a filed return, so a live upload is not sent again.
 */
const provesNotTaken = (err: PortalError) => err.rc !== undefined || err.code === 'INVALID_REQUEST';

/**
 * A run's first step: what there is to upload, with the tenant's credentials as stored (the job
 * decrypts them). Ends the run when the work is done, the live upload may already be filed
 * (outcome unknown), or the submission cannot be uploaded (rejected: `refused`).
 */
export async function startU30Upload(
  ctx: CommandContext,
  submissionId: string,
): Promise<{ upload: { mode: Mode; payload: Buffer; credentialsEnc: string } } | { done: U30RunResult } | { refused: string }> {
  const row = await loadSubmissionToUpload(ctx.trx, ctx.actor.tenantId, submissionId);
  if (!row) return { done: { missing: true } };
  if (row.status === 'accepted' || row.status === 'rejected') return { done: { status: row.status, alreadyDone: true } };
  if (row.status === 'submitted' && row.mode === 'live') return { done: await markU30OutcomeUnknown(ctx, submissionId) };
  const refuse = async (message: string) => {
    await rejectU30Submission(ctx, submissionId, message);
    return { refused: message };
  };
  if (!row.payload) return refuse('The submission has no U30 document');
  const credentialsEnc = await loadPortalCredentialsEnc(ctx.trx, ctx.actor.tenantId);
  if (!credentialsEnc) return refuse('No FinanzOnline credentials are configured');
  return { upload: { mode: row.mode, payload: row.payload, credentialsEnc } };
}

/** queued | submitted → rejected, with the portal's answer when there is one. */
export async function rejectU30Submission(
  ctx: CommandContext,
  submissionId: string,
  message: string,
  portalResponse: Record<string, unknown> | null = null,
): Promise<void> {
  await move(ctx, submissionId, ['queued', 'submitted'], {
    status: 'rejected',
    error: message,
    ...(portalResponse ? { portalResponse: storableJson(portalResponse) } : {}),
  });
}

/** A live upload that may have been filed: the row stays submitted, outcome unknown, for an admin to resolve. */
export async function markU30OutcomeUnknown(
  ctx: CommandContext,
  submissionId: string,
  message = outcomeUnknownMessage(submissionId),
): Promise<{ status: 'submitted'; outcomeUnknown: true }> {
  await move(ctx, submissionId, ['submitted'], { error: message, outcomeUnknown: true });
  return { status: 'submitted', outcomeUnknown: true };
}

/** `attempts` counts the job's tries that got as far as the portal's credentials. */
export async function countU30Attempt(ctx: CommandContext, submissionId: string): Promise<void> {
  await move(ctx, submissionId, ['queued', 'submitted'], { attempts: ctx.trx.raw('attempts + 1') });
}

/**
 * → submitted, committed before the upload leaves. Live: only from queued, in one statement, so
 * that of two runs of the job (BullMQ runs a job again when its lock lapses, and the first run
 * may still be working) only one uploads; the other finds it submitted and does not upload.
 */
export async function claimU30Upload(
  ctx: CommandContext,
  submissionId: string,
  mode: Mode,
): Promise<{ claimed: true } | { claimed: false; done: U30RunResult }> {
  if (await move(ctx, submissionId, beforeUpload(mode), { status: 'submitted' })) return { claimed: true };
  const current = await loadSubmissionToUpload(ctx.trx, ctx.actor.tenantId, submissionId);
  if (current?.status === 'submitted') return { claimed: false, done: await markU30OutcomeUnknown(ctx, submissionId) };
  return { claimed: false, done: { status: current?.status ?? 'missing', alreadyDone: true } };
}

/** submitted → accepted. rc 0 is the truth: it also clears an "outcome unknown" a concurrent run of the job wrote. */
export async function recordU30Accepted(ctx: CommandContext, submissionId: string, portalResponse: Record<string, unknown>): Promise<void> {
  await move(ctx, submissionId, ['submitted'], { status: 'accepted', outcomeUnknown: false, error: null, portalResponse: storableJson(portalResponse) });
}

/**
 * A failure that is not the portal's answer (a bug, the database): the job retries it, and a live
 * upload already sent stays submitted, so the retry will not send it again. Before the upload it
 * goes back to queued; on the last attempt no retry will come to settle the row, so it gets its
 * final state now: a live upload that may have left is outcome unknown, one that never left
 * (still queued) and any test upload are rejected.
 */
export async function settleU30InternalError(ctx: CommandContext, submissionId: string, failure: U30Failure): Promise<void> {
  const { mode, phase, lastAttempt } = failure;
  if (phase === 'login') {
    await move(ctx, submissionId, beforeUpload(mode), { status: 'queued', error: 'Internal error; retrying' });
    return;
  }
  if (!lastAttempt) return;
  if (mode === 'live') await markU30OutcomeUnknown(ctx, submissionId);
  await move(ctx, submissionId, beforeUpload(mode), { status: 'rejected', error: 'Internal error; gave up' });
}

/**
 * The portal's failure, settled: a permanent refusal rejects; an upload that may have been taken
 * is, for live, never retried as an upload (the retry settles it as outcome unknown, the last
 * attempt does so now); anything else goes back to queued for the retry, or is rejected on the
 * last attempt.
 */
export async function settleU30PortalFailure(ctx: CommandContext, submissionId: string, err: PortalError, failure: U30Failure): Promise<U30Verdict> {
  const { mode, phase, attempt, lastAttempt } = failure;
  const answer = { rc: err.rc ?? null, msg: err.portalMessage ?? null, code: err.code ?? null, httpStatus: err.httpStatus ?? null };
  const reject = async (message: string): Promise<U30Verdict> => {
    await rejectU30Submission(ctx, submissionId, message, answer);
    return { retry: false, message };
  };
  if (!err.transient) return reject(`FinanzOnline refused the ${phase}: ${err.message}`);
  const ambiguous = phase === 'upload' && !provesNotTaken(err);
  if (ambiguous && mode === 'live') {
    if (lastAttempt) {
      await markU30OutcomeUnknown(ctx, submissionId, `${err.message}; ${outcomeUnknownMessage(submissionId)}`);
      return { retry: false, message: err.message, outcomeUnknown: true };
    }
    // The retry finds the row submitted and settles it as outcome unknown without uploading.
    await move(ctx, submissionId, ['submitted'], { error: `${err.message}; upload outcome unknown, retrying` });
    return { retry: true };
  }
  if (lastAttempt) return reject(`Gave up after ${attempt} attempts: ${err.message}`);
  // Back to queued for the retry, unless a concurrent run of this job gave the row up as
  // "outcome unknown" and completed the job (no retry would come): then it stays for the admin,
  // who reads here that the portal did not take the file and resolves it as rejected.
  const requeued = await submissionIn(ctx, submissionId, ['queued', 'submitted'])
    .where({ outcomeUnknown: false })
    .update(changes(ctx, { status: 'queued', error: `${err.message}; retrying` }));
  if (requeued) await emitSubmissionUpdated(ctx, submissionId);
  else {
    await move(ctx, submissionId, ['submitted'], { error: `${err.message}: the portal did not take the file; ${outcomeUnknownMessage(submissionId)}` });
  }
  return { retry: true };
}
