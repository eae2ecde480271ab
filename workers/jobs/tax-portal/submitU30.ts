import { UnrecoverableError, type Job } from 'bullmq';
import { db } from '../../../shared/db';
import { config } from '../../../shared/config';
import { logger } from '../../../shared/logger';
import { storable, storableJson } from '../../../shared/storable';
import { decryptJson } from '../../../shared/crypto/secretBox';
import { FinanzOnlineClient, PortalError, type FinanzOnlineCredentials } from '../../../shared/providers/finanzonline';
import { outcomeUnknownMessage } from '../../../shared/commands/submitVatReturn';
import type { SubmitU30Payload } from '../../../shared/jobs/catalog';

/**
 * Upload one U30 submission to FinanzOnline (login → fileupload T/P → logout), credentials
 * decrypted here only. FinanzOnline has no idempotency key, so a live submission found still
 * `submitted` is never uploaded again: it ends outcome_unknown for an admin to resolve; test uploads
 * are simply repeated. docs/reports.md, "Idempotency and the crash window".
 */
type Row = { id: string; tenantId: string; mode: 'test' | 'live'; status: string; payload: Buffer | null };

/**
 * Failures that prove the file was not taken: the fileupload service's own answer (an rc) or a
 * request we refused to send. Anything else after the request left (timeout, dropped connection,
 * HTTP 5xx, HTML page, SOAP Server fault — a proxy answers those as readily as the service) may
 * follow a filed return, so a live upload is not sent again.
 */
const provesNotTaken = (err: PortalError) => err.rc !== undefined || err.code === 'INVALID_REQUEST';

export async function submitU30Job(job: Job<SubmitU30Payload>) {
  const { tenantId, submissionId } = job.data;
  // The job id comes from the log context (workers/worker.ts); binding it again would repeat the key.
  const log = logger.child({ submissionId });
  const table = () => db()('reportSubmissions').where({ tenantId, id: submissionId });
  const row: Row | undefined = await table().first('id', 'tenantId', 'mode', 'status', 'payload');
  if (!row) return { missing: true };
  if (row.status === 'accepted' || row.status === 'rejected') return { status: row.status, alreadyDone: true };

  const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  // Every write names the states it may leave, so that a late or second run of this job never
  // overwrites a final state: accepted, rejected, or an admin's resolution of an unknown outcome.
  // Errors quote the portal's answers: storable (shared/storable.ts), as its stored answer is.
  const update = (from: string[], patch: Record<string, unknown>) =>
    table()
      .whereIn('status', from)
      .update({ ...patch, ...(typeof patch.error === 'string' ? { error: storable(patch.error) } : {}), updatedAt: db().fn.now() });
  const reject = async (message: string, portalResponse: Record<string, unknown> | null = null) => {
    await update(['queued', 'submitted'], {
      status: 'rejected',
      error: message,
      ...(portalResponse ? { portalResponse: storableJson(portalResponse) } : {}),
    });
    return new UnrecoverableError(message);
  };
  /** A live upload that may have been filed: the row stays submitted, outcome unknown, for an admin to resolve. */
  const outcomeUnknown = async (message = outcomeUnknownMessage(submissionId)) => {
    await update(['submitted'], { error: message, outcomeUnknown: true });
    log.warn('live U30 upload outcome unknown; not uploading again');
    return { status: 'submitted', outcomeUnknown: true };
  };

  if (row.status === 'submitted' && row.mode === 'live') return outcomeUnknown();
  // The states this run may still find before its upload: a live row is only ever claimed from
  // queued; a test upload files nothing, so a test row left submitted is simply uploaded again.
  const beforeUpload = row.mode === 'live' ? ['queued'] : ['queued', 'submitted'];
  if (!row.payload) throw await reject('The submission has no U30 document');

  const tenant = await db()('tenants').where({ id: tenantId }).first('portalCredentialsEnc');
  if (!tenant?.portalCredentialsEnc) throw await reject('No FinanzOnline credentials are configured');
  let creds: FinanzOnlineCredentials;
  try {
    creds = decryptJson<FinanzOnlineCredentials>(tenant.portalCredentialsEnc);
  } catch {
    throw await reject('The stored FinanzOnline credentials cannot be decrypted; enter them again in the settings');
  }

  const cfg = config().finanzOnline;
  const client = new FinanzOnlineClient({ sessionUrl: cfg.sessionUrl, fileUploadUrl: cfg.fileUploadUrl, timeoutMs: cfg.timeoutMs, logger: log });
  await update(['queued', 'submitted'], { attempts: db().raw('attempts + 1') });

  const failed = async (err: unknown, phase: 'login' | 'upload'): Promise<never> => {
    if (!(err instanceof PortalError)) {
      // Not the portal's answer (a bug, the database): retry; a live upload already sent stays
      // 'submitted' and the retry will not send it again.
      if (phase === 'login') await update(beforeUpload, { status: 'queued', error: 'Internal error; retrying' }).catch(() => undefined);
      else if (lastAttempt) {
        // No retry will come to settle the row, so give it its final state now: a live upload
        // that may have left is outcome unknown; one that never left (still queued) and any test
        // upload are rejected.
        const now = db().fn.now();
        if (row.mode === 'live')
          await table()
            .where({ status: 'submitted' })
            .update({ error: outcomeUnknownMessage(submissionId), outcomeUnknown: true, updatedAt: now })
            .catch(() => undefined);
        await table()
          .whereIn('status', row.mode === 'live' ? ['queued'] : ['queued', 'submitted'])
          .update({ status: 'rejected', error: 'Internal error; gave up', updatedAt: now })
          .catch(() => undefined);
      }
      throw err;
    }
    const answer = { rc: err.rc ?? null, msg: err.portalMessage ?? null, code: err.code ?? null, httpStatus: err.httpStatus ?? null };
    if (!err.transient) throw await reject(`FinanzOnline refused the ${phase}: ${err.message}`, answer);
    const ambiguous = phase === 'upload' && !provesNotTaken(err);
    if (ambiguous && row.mode === 'live') {
      if (lastAttempt) {
        await outcomeUnknown(`${err.message}; ${outcomeUnknownMessage(submissionId)}`);
        throw new UnrecoverableError(err.message);
      }
      // The retry finds the row submitted and settles it as outcome unknown without uploading.
      await update(['submitted'], { error: `${err.message}; upload outcome unknown, retrying` });
      throw err;
    }
    if (lastAttempt) throw await reject(`Gave up after ${job.attemptsMade + 1} attempts: ${err.message}`, answer);
    // Back to queued for the retry, unless a concurrent run of this job gave the row up as
    // "outcome unknown" and completed the job (no retry would come): then it stays for the admin,
    // who reads here that the portal did not take the file and resolves it as rejected.
    const requeued = await table()
      .whereIn('status', ['queued', 'submitted'])
      .where({ outcomeUnknown: false })
      .update({ status: 'queued', error: storable(`${err.message}; retrying`), updatedAt: db().fn.now() });
    if (!requeued) await update(['submitted'], { error: `${err.message}: the portal did not take the file; ${outcomeUnknownMessage(submissionId)}` });
    throw err;
  };

  let sessionId: string;
  try {
    sessionId = await client.login(creds);
  } catch (err) {
    return await failed(err, 'login');
  }
  try {
    // Claimed before the upload leaves. Live: only from queued, in one statement, so that of two
    // runs of this job (BullMQ runs a job again when its lock lapses, and the first run may still
    // be working) only one uploads; the other finds it submitted and does not upload.
    const claimed = await update(beforeUpload, { status: 'submitted' });
    if (!claimed) {
      const current: Row | undefined = await table().first('id', 'tenantId', 'mode', 'status', 'payload');
      if (current?.status === 'submitted') return await outcomeUnknown();
      return { status: current?.status ?? 'missing', alreadyDone: true };
    }
    const upload = (id: string) =>
      client.upload({ sessionId: id, tid: creds.tid, benid: creds.benid, art: 'U30', uebermittlung: row.payload!, mode: row.mode });
    let result: Awaited<ReturnType<typeof upload>>;
    try {
      result = await upload(sessionId);
    } catch (err) {
      if (!(err instanceof PortalError && err.code === 'SESSION_INVALID')) throw err;
      // The session expired between login and upload: the portal did not take the file.
      sessionId = await client.login(creds);
      result = await upload(sessionId);
    }
    const portalResponse = {
      rc: result.rc,
      msg: result.msg,
      mode: row.mode,
      uebermittlung: row.mode === 'live' ? 'P' : 'T',
      receivedAt: new Date().toISOString(),
    };
    // rc 0 is the truth: it also clears an "outcome unknown" a concurrent run of this job wrote.
    await update(['submitted'], { status: 'accepted', outcomeUnknown: false, error: null, portalResponse: storableJson(portalResponse) });
    log.info({ mode: row.mode }, 'U30 accepted by FinanzOnline');
    return { status: 'accepted' };
  } catch (err) {
    return await failed(err, 'upload');
  } finally {
    await client.logout({ sessionId, tid: creds.tid, benid: creds.benid }).catch((err: unknown) => {
      log.warn({ code: err instanceof PortalError ? err.code : undefined }, 'FinanzOnline logout failed; the session expires on its own');
    });
  }
}
