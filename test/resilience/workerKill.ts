/**
 * Helpers for the worker-kill tests: real worker processes (workers/index.ts) against the run's
 * PostgreSQL and this file's Redis prefix, with a short BullMQ lock so a killed worker's job is
 * detected as stalled in seconds, and a way to freeze a job at a known point.
 */
import type { Knex } from 'knex';
import { db } from '../../shared/db';
import { spawnEntry, waitForOutput } from '../helpers/processes';
import type { ArtifactKey } from '../../shared/documents/artifactStore';
import { waitUntil } from './faults';
import { renderJobId } from '../../shared/documents/kinds';
import { createTeam } from '../helpers/factories';
import { createDraftInvoice } from '../helpers/invoiceFactory';

/** WORKER_LOCK_DURATION_MS: also the stalled-check interval (workers/worker.ts). */
export const LOCK_MS = '3000';

export async function startWorkerProcess(env: Record<string, string> = {}) {
  const child = spawnEntry('workers/index.ts', { WORKER_LOCK_DURATION_MS: LOCK_MS, ...env });
  await waitForOutput(child, /workers started/, 30_000);
  return child;
}

/** A new tenant's draft invoice, the artifact key of its PDF and the id of the job that renders it. */
export async function draftPdfToRender() {
  const { tenant, admin } = await createTeam();
  const draft = await createDraftInvoice(tenant, admin);
  const { version } = await db()('invoices').where({ id: draft.id }).first('version');
  const key: ArtifactKey = { tenantId: tenant.id, invoiceId: draft.id, kind: 'pdf', version };
  return { tenant, admin, draft, key, jobId: renderJobId('pdf', draft.id, version) };
}

/**
 * Freeze a job deterministically where it stores a rendered document: hold the unique key of
 * that artifact in an open transaction, so the job's INSERT … ON CONFLICT waits on it. Rendering
 * is done by then; the job is mid-flight with nothing committed. Release with rollback().
 */
export async function holdArtifactKey(key: ArtifactKey): Promise<Knex.Transaction> {
  const trx = await db().transaction();
  await trx('documents').insert({ ...key, contentType: 'application/octet-stream', content: Buffer.from('placeholder held by the test') });
  return trx;
}

/** Wait until some session of this database waits on a lock while inserting a document. */
export async function waitForBlockedDocumentInsert(timeoutMs = 30_000): Promise<void> {
  await waitUntil(
    async () => {
      const { rows } = await db().raw(
        `select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ~* '^insert into (documents|"documents") '`,
      );
      return rows.length > 0;
    },
    'a worker blocked on its document insert',
    timeoutMs,
    50,
  );
}
