import type { Knex } from 'knex';
import { notFound } from '../../errors';

/** A U30 submission as the API shows it (never the payload's credentials — there are none in it). */
export interface SubmissionView {
  id: string;
  kind: string;
  year: number;
  period: string;
  mode: 'test' | 'live';
  resubmission: boolean;
  status: 'queued' | 'submitted' | 'accepted' | 'rejected';
  /**
   * true while a live upload's outcome is unknown and the job has stopped trying (status stays
   * submitted): an admin checks the FinanzOnline DataBox and resolves it to accepted or rejected.
   */
  outcomeUnknown: boolean;
  /** Set when an admin resolved an unknown outcome by hand. */
  resolution: { outcome: 'accepted' | 'rejected'; by: string | null; at: string; note: string | null } | null;
  portalResponse: Record<string, unknown> | null;
  error: string | null;
  attempts: number;
  createdAt: string;
  updatedAt: string;
}

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : String(v));

export async function loadSubmission(db: Knex, tenantId: string, id: string): Promise<SubmissionView> {
  const r = await db('reportSubmissions')
    .where({ tenantId, id })
    .first(
      'id',
      'kind',
      'year',
      'period',
      'mode',
      'resubmission',
      'status',
      'outcomeUnknown',
      'resolvedBy',
      'resolvedAt',
      'resolutionNote',
      'portalResponse',
      'error',
      'attempts',
      'createdAt',
      'updatedAt',
    );
  if (!r) throw notFound('Submission');
  const { resolvedBy, resolvedAt, resolutionNote, ...rest } = r;
  return {
    ...rest,
    outcomeUnknown: r.outcomeUnknown === true,
    resolution: resolvedAt ? { outcome: r.status, by: resolvedBy ?? null, at: iso(resolvedAt), note: resolutionNote ?? null } : null,
    portalResponse: r.portalResponse ?? null,
    error: r.error ?? null,
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
  };
}

export type SubmissionStatus = SubmissionView['status'];

/** What the upload job needs of a submission: its state and the exact bytes to upload. */
export interface SubmissionToUpload {
  id: string;
  tenantId: string;
  mode: 'test' | 'live';
  status: SubmissionStatus;
  payload: Buffer | null;
}

export async function loadSubmissionToUpload(db: Knex, tenantId: string, id: string): Promise<SubmissionToUpload | undefined> {
  return db('reportSubmissions').where({ tenantId, id }).first('id', 'tenantId', 'mode', 'status', 'payload');
}

/** The tenant's FinanzOnline credentials, encrypted as stored (shared/crypto/secretBox.ts); null when none are configured. */
export async function loadPortalCredentialsEnc(db: Knex, tenantId: string): Promise<string | null> {
  const row: { portalCredentialsEnc: string | null } | undefined = await db('tenants').where({ id: tenantId }).first('portalCredentialsEnc');
  return row?.portalCredentialsEnc ?? null;
}
