import { UnrecoverableError, type Job } from 'bullmq';
import { db } from '../../../shared/db';
import { config } from '../../../shared/config';
import { logger } from '../../../shared/logger';
import { systemActor } from '../../../shared/actor';
import { decryptJson } from '../../../shared/crypto/secretBox';
import { FinanzOnlineClient, PortalError, type FinanzOnlineCredentials } from '../../../shared/providers/finanzonline';
import {
  claimU30Upload,
  countU30Attempt,
  recordU30Accepted,
  rejectU30Submission,
  settleU30InternalError,
  settleU30PortalFailure,
  startU30Upload,
  type U30Failure,
} from '../../../shared/commands/reports/u30Upload';
import type { CommandContext } from '../../../shared/commands/types';
import type { SubmitU30Payload } from '../../../shared/jobs/catalog';

/**
 * Upload one U30 submission to FinanzOnline (login → fileupload T/P → logout), credentials
 * decrypted here only. The submission's states and what each failure does to them are commands
 * (shared/commands/reports/u30Upload.ts), each committed on its own; the portal is called
 * between them, outside any transaction. A live submission found still `submitted` is never
 * uploaded again. docs/reports.md, "Idempotency and the crash window".
 */
export async function submitU30Job(job: Job<SubmitU30Payload>) {
  const { tenantId, submissionId } = job.data;
  // The job id comes from the log context (workers/worker.ts); binding it again would repeat the key.
  const log = logger.child({ submissionId });
  const actor = systemActor(tenantId);
  const run = <T>(command: (ctx: CommandContext) => Promise<T>) => db().transaction((trx) => command({ trx, actor }));
  const report = <R extends object>(result: R): R => {
    if ('outcomeUnknown' in result && result.outcomeUnknown) log.warn('live U30 upload outcome unknown; not uploading again');
    return result;
  };

  const start = await run((ctx) => startU30Upload(ctx, submissionId));
  if ('done' in start) return report(start.done);
  if ('refused' in start) throw new UnrecoverableError(start.refused);
  const { mode, payload, credentialsEnc } = start.upload;
  let creds: FinanzOnlineCredentials;
  try {
    creds = decryptJson<FinanzOnlineCredentials>(credentialsEnc);
  } catch {
    const message = 'The stored FinanzOnline credentials cannot be decrypted; enter them again in the settings';
    await run((ctx) => rejectU30Submission(ctx, submissionId, message));
    throw new UnrecoverableError(message);
  }

  const cfg = config().finanzOnline;
  const client = new FinanzOnlineClient({ sessionUrl: cfg.sessionUrl, fileUploadUrl: cfg.fileUploadUrl, timeoutMs: cfg.timeoutMs, logger: log });
  await run((ctx) => countU30Attempt(ctx, submissionId));

  const failed = async (err: unknown, phase: U30Failure['phase']): Promise<never> => {
    const failure: U30Failure = { mode, phase, attempt: job.attemptsMade + 1, lastAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1) };
    if (!(err instanceof PortalError)) {
      // Not the portal's answer (a bug, the database): retried. Settling the row is best effort,
      // the database may be what failed.
      await run((ctx) => settleU30InternalError(ctx, submissionId, failure)).catch(() => undefined);
      throw err;
    }
    const verdict = report(await run((ctx) => settleU30PortalFailure(ctx, submissionId, err, failure)));
    throw verdict.retry ? err : new UnrecoverableError(verdict.message);
  };

  let sessionId: string;
  try {
    sessionId = await client.login(creds);
  } catch (err) {
    return await failed(err, 'login');
  }
  try {
    const claim = await run((ctx) => claimU30Upload(ctx, submissionId, mode));
    if (!claim.claimed) return report(claim.done);
    const upload = (id: string) => client.upload({ sessionId: id, tid: creds.tid, benid: creds.benid, art: 'U30', uebermittlung: payload, mode });
    let result: Awaited<ReturnType<typeof upload>>;
    try {
      result = await upload(sessionId);
    } catch (err) {
      if (!(err instanceof PortalError && err.code === 'SESSION_INVALID')) throw err;
      // The session expired between login and upload: the portal did not take the file.
      sessionId = await client.login(creds);
      result = await upload(sessionId);
    }
    const portalResponse = { rc: result.rc, msg: result.msg, mode, uebermittlung: mode === 'live' ? 'P' : 'T', receivedAt: new Date().toISOString() };
    await run((ctx) => recordU30Accepted(ctx, submissionId, portalResponse));
    log.info({ mode }, 'U30 accepted by FinanzOnline');
    return { status: 'accepted' };
  } catch (err) {
    return await failed(err, 'upload');
  } finally {
    await client.logout({ sessionId, tid: creds.tid, benid: creds.benid }).catch((err: unknown) => {
      log.warn({ code: err instanceof PortalError ? err.code : undefined }, 'FinanzOnline logout failed; the session expires on its own');
    });
  }
}
