import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { logger } from '../../shared/logger';
import { enqueue, getQueue, QUEUES } from '../../shared/queues';
import { startWorkers, type RunningWorkers } from '../../workers/worker';
import { waitUntil } from '../helpers/waitUntil';

/**
 * docs/operations.md: a failed attempt that BullMQ retries is logged at warn ("job attempt
 * failed"), only the final failure at error ("job failed"). The lines are the bytes pino writes
 * (as in test/shared/logContext.test.ts), from a real BullMQ worker on Redis.
 */
type Line = Record<string, unknown> & { msg: string; level: number };
const lines: Line[] = [];
const stream = (logger as unknown as Record<symbol, { write: (s: string) => boolean }>)[pino.symbols.streamSym];
const levelBefore = logger.level;
let running: RunningWorkers;

beforeAll(async () => {
  logger.level = 'info';
  vi.spyOn(stream, 'write').mockImplementation((chunk: string) => {
    for (const raw of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(raw));
    return true;
  });
  // In-process (not sandboxed): the same 'failed' listener logs sandboxed jobs' failures.
  running = await startWorkers({ queues: [QUEUES.documents], sandbox: false, schedule: false, relay: false });
});
afterAll(async () => {
  await running?.close();
  vi.restoreAllMocks();
  logger.level = levelBefore;
});

const WARN = 40;
const ERROR = 50;
const linesOf = (jobId: string) => lines.filter((l) => l.jobId === jobId && /job (attempt )?failed/.test(l.msg));

describe('job failure log levels', () => {
  it('an attempt that will be retried is warn "job attempt failed"; the last attempt is error "job failed"', async () => {
    const jobId = `log-levels-retried-${Date.now()}`;
    // Not a uuid: the render job's first query fails, on every attempt (an ordinary error: retried).
    await enqueue(
      QUEUES.documents,
      'render-invoice-document',
      { tenantId: 'not-a-uuid', invoiceId: 'not-a-uuid', kind: 'pdf', version: 1 },
      {
        jobId,
        attempts: 3,
        backoff: { type: 'fixed', delay: 10 },
      },
    );
    await waitUntil(async () => linesOf(jobId).some((l) => l.level === ERROR), 'the final failure to be logged', 60_000, 50);
    const logged = linesOf(jobId).map((l) => ({ level: l.level, msg: l.msg, attempt: l.attempt }));
    expect(logged).toEqual([
      { level: WARN, msg: 'job attempt failed', attempt: 1 },
      { level: WARN, msg: 'job attempt failed', attempt: 2 },
      { level: ERROR, msg: 'job failed', attempt: 3 },
    ]);
    expect(linesOf(jobId)[0]).toMatchObject({ queue: 'documents', job: 'render-invoice-document', attempts: 3 });
    expect(String(linesOf(jobId)[2].err)).toMatch(/uuid/);
  });

  it('a job that gives up on purpose (UnrecoverableError) is error "job failed" at its first attempt, never warn', async () => {
    const jobId = `log-levels-unrecoverable-${Date.now()}`;
    await enqueue(QUEUES.documents, 'no-such-job', {}, { jobId, attempts: 3 });
    await waitUntil(async () => linesOf(jobId).length > 0, 'the failure to be logged', 60_000, 50);
    // Failed for good: no retry is scheduled that could log again.
    expect(await getQueue(QUEUES.documents).getJobState(jobId)).toBe('failed');
    expect(linesOf(jobId).map((l) => ({ level: l.level, msg: l.msg }))).toEqual([{ level: ERROR, msg: 'job failed' }]);
    expect(String(linesOf(jobId)[0].err)).toMatch(/No handler for job "no-such-job"/);
  });
});
