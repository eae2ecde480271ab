import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server';
import { db } from '../../shared/db';
import { enqueue, getQueue, QUEUES } from '../../shared/queues';
import { exitOf } from '../helpers/processes';
import { processTree, waitUntil } from './faults';
import { draftPdfToRender, holdArtifactKey, startWorkerProcess, waitForBlockedDocumentInsert } from './workerKill';

/**
 * A render job whose worker stops renewing its lock (frozen with SIGSTOP, as a process starved of
 * CPU is, in effect) while a client waits for the document: another worker takes the job over
 * once the lock lapsed, and the waiting request gets the document — not a run of 503s.
 */
// The workers' lock here: renewed every second, stalled check every 2 s, so a takeover takes 4 s.
// The API's view of it (this process's configuration) is the same: it tells clients the takeover time.
const LAPSE_LOCK_MS = '6000';
const TAKEOVER_S = '4';
process.env.WORKER_LOCK_DURATION_MS = LAPSE_LOCK_MS;
const startWorker = () => startWorkerProcess({ WORKER_LOCK_DURATION_MS: LAPSE_LOCK_MS });
// RENDER_WAIT_MS generous: on a loaded machine worker B's renderer child takes long to start.
const ctx = useTestServer({ WORKER_LOCK_DURATION_MS: LAPSE_LOCK_MS, RENDER_WAIT_MS: '60000' });
// And one that gives up soon, for the case where no worker is left to take the job over.
const impatient = useTestServer({ WORKER_LOCK_DURATION_MS: LAPSE_LOCK_MS, RENDER_WAIT_MS: '1500' });

const started: ChildProcess[] = [];
const signalTree = (child: ChildProcess, signal: NodeJS.Signals) => {
  for (const pid of processTree(child.pid!)) {
    try {
      process.kill(pid, signal);
    } catch {
      /* gone */
    }
  }
};
afterEach(async () => {
  for (const c of started.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      signalTree(c, 'SIGCONT');
      c.kill('SIGKILL');
      await exitOf(c);
    }
  }
});

/** Backends waiting on a lock while inserting a document (a render held at the test's key). */
const blockedDocumentInserts = async () =>
  (
    (
      await db().raw(
        `select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ~* '^insert into (documents|"documents") '`,
      )
    ).rows as { pid: number }[]
  ).map((r) => r.pid);

describe('a render job whose lock lapsed', () => {
  it('is taken over by another worker and the waiting request gets the document', async () => {
    const { admin, draft, key, jobId } = await draftPdfToRender();

    // The render of worker A stops at its INSERT (the test holds the key), so it is mid-job.
    const held = await holdArtifactKey(key);
    const statuses: number[] = [];
    let answer: { status: number; raw: Buffer } | undefined;
    let client: Promise<void> | undefined;
    try {
      await enqueue(QUEUES.documents, 'render-invoice-document', key, { jobId });
      const a = await startWorker();
      started.push(a);
      await waitForBlockedDocumentInsert();
      // Worker B is up before A freezes (and finds no waiting job: A has it).
      const b = await startWorker();
      started.push(b);
      expect(await getQueue(QUEUES.documents).getJobState(jobId)).toBe('active');
      // A's insert (its backend waits on, and PostgreSQL cancels it after the 30 s statement timeout).
      const aInserts = await blockedDocumentInserts();
      signalTree(a, 'SIGSTOP');
      // The client asks for the PDF now and, on 503, retries after Retry-After (at most 6 times).
      client = (async () => {
        for (let i = 0; i < 6; i++) {
          const res = await ctx.http.get(`/api/invoices/${draft.id}/pdf`, { token: admin.token });
          statuses.push(res.status);
          if (res.status !== 503) {
            answer = res;
            return;
          }
          const retryAfter = Number(res.headers.get('retry-after'));
          expect(retryAfter).toBeGreaterThanOrEqual(1);
          await new Promise((r) => setTimeout(r, retryAfter * 1000));
        }
      })();
      // A's lock lapses; B's stalled check moves the job back, B takes it and blocks on the key too.
      await waitUntil(
        async () => (await blockedDocumentInserts()).some((pid) => !aInserts.includes(pid)),
        'worker B to take the job over and reach its INSERT',
        120_000,
        100,
      ).catch(async (err) => {
        throw new Error(`${err.message}; job ${await getQueue(QUEUES.documents).getJobState(jobId)}; worker B said:\n${b.output().slice(-3000)}`);
      });
    } finally {
      await held.rollback();
    }
    await client;
    // Completed while A is still frozen: B completed it.
    await waitUntil(async () => (await getQueue(QUEUES.documents).getJobState(jobId)) === 'completed', 'worker B to complete the job', 60_000, 100);
    expect(answer?.status).toBe(200);
    expect(answer?.raw.subarray(0, 5).toString()).toBe('%PDF-');
    // The wait ended with the job: no 503 on the way.
    expect(statuses).toEqual([200]);
    const rows = await db()('documents').where({ invoiceId: draft.id, kind: 'pdf', version: key.version }).select('content');
    expect(rows).toHaveLength(1);
    expect(rows[0].content.subarray(0, 5).toString()).toBe('%PDF-');
  }, 300_000);

  it('with no worker left to take it over, the 503 says when a takeover can be (not a constant), and the document is served once the worker runs again', async () => {
    const { admin, draft, key, jobId } = await draftPdfToRender();
    const held = await holdArtifactKey(key);
    const retryAfters = new Set<string>();
    let a: ChildProcess | undefined;
    try {
      await enqueue(QUEUES.documents, 'render-invoice-document', key, { jobId });
      a = await startWorker();
      started.push(a);
      await waitForBlockedDocumentInsert();
      signalTree(a, 'SIGSTOP');
      // Each request waits 1.5 s (plus one takeover once the lock has lapsed) and answers 503:
      // Retry-After 1 while the job still holds its lock, the takeover time once it lapsed.
      await waitUntil(
        async () => {
          const res = await impatient.http.get(`/api/invoices/${draft.id}/pdf`, { token: admin.token });
          expect(res.status).toBe(503);
          retryAfters.add(res.headers.get('retry-after')!);
          return retryAfters.has(TAKEOVER_S);
        },
        'a 503 whose Retry-After is the takeover time',
        90_000,
        100,
      );
      expect([...retryAfters].every((r) => r === '1' || r === TAKEOVER_S)).toBe(true);
      expect(await getQueue(QUEUES.documents).getJobState(jobId)).toBe('active');
    } finally {
      if (a) signalTree(a, 'SIGCONT');
      await held.rollback();
    }
    // The worker runs again: its own stalled check hands the job back to it, or its render, which
    // stores the document, ends the wait; either way the client gets the document.
    let res: { status: number; raw: Buffer } | undefined;
    await waitUntil(
      async () => {
        res = await impatient.http.get(`/api/invoices/${draft.id}/pdf`, { token: admin.token });
        return res.status === 200;
      },
      'the document once the worker runs again',
      90_000,
      500,
    );
    expect(res?.raw.subarray(0, 5).toString()).toBe('%PDF-');
  }, 300_000);
});
