import { afterEach, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { db } from '../../shared/db';
import { enqueue, getQueue, QUEUES } from '../../shared/queues';
import { exitOf } from '../helpers/processes';
import { readFileSync } from 'node:fs';
import { processTree, sigkillTree, waitUntil } from './faults';
import { draftPdfToRender, holdArtifactKey, startWorkerProcess, waitForBlockedDocumentInsert } from './workerKill';

/**
 * A worker process (and its sandboxed renderer children) is SIGKILLed while a PDF job is in
 * flight; a new worker picks the stalled job up after the lock expires, and the invoice version
 * ends with exactly one stored artifact and a completed job.
 */
const started: ChildProcess[] = [];
// Each test ends with no worker left running, so the next test's jobs meet only its own workers.
afterEach(async () => {
  for (const c of started.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGTERM');
      await exitOf(c);
    }
  }
});

describe('worker SIGKILLed during PDF rendering (documents queue, sandboxed)', () => {
  it('the stalled job is retried by a new worker and exactly one artifact is stored', async () => {
    const { draft, key, jobId } = await draftPdfToRender();

    const held = await holdArtifactKey(key);
    let released = false;
    try {
      await enqueue(QUEUES.documents, 'render-invoice-document', key, { jobId });
      const first = await startWorkerProcess();
      started.push(first);
      // The PDF is rendered and its INSERT waits on our held key: the job is mid-flight.
      await waitForBlockedDocumentInsert();
      expect(await (await getQueue(QUEUES.documents).getJob(jobId))!.getState()).toBe('active');
      await sigkillTree(first);
      await held.rollback();
      released = true;
    } finally {
      if (!released) await held.rollback();
    }

    const second = await startWorkerProcess();
    started.push(second);
    // State first, then the job: a copy fetched before the state check could predate completion.
    const job = await waitUntil(
      async () => {
        const state = await getQueue(QUEUES.documents).getJobState(jobId);
        return state === 'completed' ? getQueue(QUEUES.documents).getJob(jobId) : null;
      },
      'the stalled render job to complete on the new worker',
      40_000,
      200,
    );
    expect(job.returnvalue).toBeTruthy();

    const rows = await db()('documents').where({ invoiceId: draft.id, kind: 'pdf', version: key.version }).select('content');
    expect(rows).toHaveLength(1);
    expect(rows[0].content.subarray(0, 5).toString()).toBe('%PDF-');
  }, 90_000);

  it('only the worker process is SIGKILLed (its renderer children are not): the orphaned renderer exits instead of spinning', async () => {
    const { key, jobId } = await draftPdfToRender();
    const held = await holdArtifactKey(key);
    const alive = (pid: number) => {
      try {
        return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
      } catch {
        return false;
      }
    };
    let renderers: number[] = [];
    try {
      await enqueue(QUEUES.documents, 'render-invoice-document', key, { jobId });
      const worker = await startWorkerProcess();
      started.push(worker);
      await waitForBlockedDocumentInsert();
      // BullMQ's children run its child wrapper (main.js); the worker's other descendants are not ours to check.
      renderers = processTree(worker.pid!).filter((pid) => pid !== worker.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('bullmq'));
      expect(renderers.length).toBeGreaterThan(0);
      const exited = exitOf(worker);
      worker.kill('SIGKILL');
      await exited;
      await held.rollback();
      await waitUntil(async () => renderers.every((pid) => !alive(pid)), 'the orphaned renderers to exit', 30_000, 100);
    } finally {
      await held.rollback().catch(() => undefined);
      for (const pid of renderers.filter(alive)) process.kill(pid, 'SIGKILL');
    }
  }, 90_000);
});
