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
    .first('id', 'kind', 'year', 'period', 'mode', 'resubmission', 'status', 'portalResponse', 'error', 'attempts', 'createdAt', 'updatedAt');
  if (!r) throw notFound('Submission');
  return { ...r, portalResponse: r.portalResponse ?? null, error: r.error ?? null, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt) };
}
