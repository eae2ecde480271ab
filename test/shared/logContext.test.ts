import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Batches } from '../../shared/batches';
import { db } from '../../shared/db';
import { issueRefreshToken } from '../../shared/auth/refreshTokens';
import { logger } from '../../shared/logger';
import { runWithLogContext } from '../../shared/logContext';
import { getQueue, QUEUES } from '../../shared/queues';
import { startWorkers, type RunningWorkers } from '../../workers/worker';
import { createTenant, createUser } from '../helpers/factories';
import { useTestServer } from '../helpers/server';
import { waitUntil } from '../helpers/waitUntil';
import { storePendingBankEvent } from '../helpers/webhookFactory';

/**
 * Every line logged while serving a request or running a job carries its request id or job id
 * (shared/logContext.ts, the logger's mixin), also from shared/ code that only imports `logger`.
 * The lines are the bytes pino writes: the test records its destination stream's writes, with the
 * real server, database, Redis and BullMQ worker behind them.
 */
type Line = Record<string, unknown> & { msg: string; raw: string };
const lines: Line[] = [];
const stream = (logger as unknown as Record<symbol, { write: (s: string) => boolean }>)[pino.symbols.streamSym];
const levelBefore = logger.level;

beforeAll(() => {
  // Tests run with LOG_LEVEL=silent; nothing would be written.
  logger.level = 'info';
  vi.spyOn(stream, 'write').mockImplementation((chunk: string) => {
    for (const raw of String(chunk).split('\n').filter(Boolean)) lines.push({ ...JSON.parse(raw), raw });
    return true;
  });
});
afterAll(() => {
  vi.restoreAllMocks();
  logger.level = levelBefore;
});

const find = (pred: (l: Line) => boolean) => lines.filter(pred);
/** pino writes child bindings and mixin fields side by side: a key twice in the JSON is a bug. */
const expectOnce = (line: Line, ...keys: string[]) => {
  for (const k of keys) expect(line.raw.split(`"${k}":`).length - 1, `${k} in ${line.raw}`).toBe(1);
};

describe('log context, in-process', () => {
  it('interleaved contexts keep their own ids across awaits; outside, lines carry none; a line’s own fields stay on that line', async () => {
    let releaseA!: () => void;
    const gate = new Promise<void>((r) => (releaseA = r));
    const a = runWithLogContext({ requestId: 'ctx-test-a-1' }, async () => {
      logger.info({ extra: 'only here' }, 'ctx-test a1');
      await gate;
      logger.info('ctx-test a2');
    });
    const b = runWithLogContext({ requestId: 'ctx-test-b-1' }, async () => {
      logger.info('ctx-test b1');
      releaseA();
      await sleep(5);
      logger.info('ctx-test b2');
    });
    await Promise.all([a, b]);
    logger.info('ctx-test outside');

    const byMsg = (msg: string) => find((l) => l.msg === msg)[0];
    expect(byMsg('ctx-test a1')).toMatchObject({ requestId: 'ctx-test-a-1', extra: 'only here' });
    expect(byMsg('ctx-test a2').requestId).toBe('ctx-test-a-1');
    // pino merges a line's fields into the mixin's object: the context must not keep them.
    expect(byMsg('ctx-test a2').extra).toBeUndefined();
    expect(byMsg('ctx-test b1').requestId).toBe('ctx-test-b-1');
    expect(byMsg('ctx-test b2').requestId).toBe('ctx-test-b-1');
    expect(byMsg('ctx-test outside').requestId).toBeUndefined();
  });

  it('a batch of several callers’ items logs without any of their ids; an item run alone logs with its caller’s', async () => {
    const batches = new Batches<string, string>({
      maxSize: 10,
      runBatch: async (items) => {
        logger.info({ items }, 'ctx-test batch');
        throw new Error('batch refused');
      },
      runOne: async (item) => {
        await sleep(1);
        logger.info({ item }, 'ctx-test one');
        return item;
      },
    });
    // Same turn of the event loop: one batch of both; the first caller starts the drain loop.
    const results = await Promise.all([
      runWithLogContext({ requestId: 'ctx-batch-1' }, () => batches.run('first')),
      runWithLogContext({ requestId: 'ctx-batch-2' }, () => batches.run('second')),
    ]);
    expect(results).toEqual(['first', 'second']);
    const [batch] = find((l) => l.msg === 'ctx-test batch');
    expect(batch.items).toEqual(['first', 'second']);
    expect(batch.requestId).toBeUndefined();
    const ones = find((l) => l.msg === 'ctx-test one').map((l) => [l.item, l.requestId]);
    expect(ones.sort()).toEqual([
      ['first', 'ctx-batch-1'],
      ['second', 'ctx-batch-2'],
    ]);
  });
});

describe('requests', () => {
  const ctx = useTestServer();

  /** A user whose refresh token was already spent once through the API: presenting it again is reuse. */
  async function spentRefreshToken() {
    const tenant = await createTenant();
    const user = await createUser(tenant);
    const issued = await issueRefreshToken(db(), { tenantId: tenant.id, userId: user.id });
    const res = await ctx.http.post('/api/auth/refresh', undefined, { headers: { cookie: `refreshToken=${issued.token}` } });
    expect(res.status).toBe(200);
    return issued;
  }

  it('a line logged by shared/ code while serving a request carries the X-Request-Id the response names, as does the access log line', async () => {
    const spent = await spentRefreshToken();
    // No X-Request-Id sent: the server mints one and answers with it.
    const res = await ctx.http.post('/api/auth/refresh', undefined, { headers: { cookie: `refreshToken=${spent.token}` } });
    expect(res.status).toBe(401);
    const requestId = res.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);

    // shared/auth/refreshTokens.ts logs the reuse with the plain shared logger.
    const [reuse] = find((l) => l.msg === 'refresh token reuse detected: family revoked' && l.familyId === spent.familyId);
    expect(reuse).toMatchObject({ requestId, level: 40, service: 'accounting' });
    expectOnce(reuse, 'requestId');
    const access = await waitUntil(async () => find((l) => l.msg === 'request' && l.requestId === requestId)[0], 'the access log line');
    expect(access).toMatchObject({ method: 'POST', path: '/api/auth/refresh', status: 401 });
    expectOnce(access, 'requestId');
  });

  it('concurrent requests each keep their own id', async () => {
    const spent = await Promise.all(Array.from({ length: 8 }, () => spentRefreshToken()));
    const sent = spent.map((s, i) => ({ ...s, requestId: `ctx-concurrent-${i}-${s.familyId.slice(0, 8)}` }));
    const answers = await Promise.all(
      sent.map((s) => ctx.http.post('/api/auth/refresh', undefined, { headers: { cookie: `refreshToken=${s.token}`, 'x-request-id': s.requestId } })),
    );
    expect(answers.map((r) => r.status)).toEqual(sent.map(() => 401));
    expect(answers.map((r) => r.headers.get('x-request-id'))).toEqual(sent.map((s) => s.requestId));

    for (const s of sent) {
      const reuse = find((l) => l.msg === 'refresh token reuse detected: family revoked' && l.familyId === s.familyId);
      expect(reuse.map((l) => l.requestId)).toEqual([s.requestId]);
    }
    const accessIds = await waitUntil(async () => {
      const ids = find((l) => l.msg === 'request' && String(l.requestId).startsWith('ctx-concurrent-')).map((l) => l.requestId);
      return ids.length === sent.length && ids;
    }, 'the access log lines');
    expect([...accessIds].sort()).toEqual(sent.map((s) => s.requestId).sort());
  });
});

describe('jobs', () => {
  let running: RunningWorkers | undefined;
  beforeAll(async () => {
    running = await startWorkers({ queues: ['maintenance'], schedule: false, relay: false });
  });
  afterAll(async () => {
    await running?.close();
    // The sweep's re-queued webhook jobs wait in this file's queue; no webhooks worker runs here.
    await Promise.all([getQueue(QUEUES.maintenance).obliterate({ force: true }), getQueue(QUEUES.webhooks).obliterate({ force: true })]);
  });

  it('lines logged by shared/ code inside concurrently running jobs carry their own job id, queue, job name and attempt', async () => {
    // Pending for half an hour with no job in Redis: the sweep (narrowed to the tenant, the test
    // database is shared) queues their jobs again and logs the count from
    // shared/webhooks/sweepStuckEvents.ts: 1 for the first tenant, 2 for the second.
    const [one, two] = await Promise.all([createTenant(), createTenant()]);
    await storePendingBankEvent(one.id, { minutesAgo: 30 });
    await Promise.all([storePendingBankEvent(two.id, { minutesAgo: 30 }), storePendingBankEvent(two.id, { minutesAgo: 30 })]);

    const queue = getQueue(QUEUES.maintenance);
    const [jobOne, jobTwo] = await queue.addBulk([
      { name: 'sweep-stuck-webhook-events', data: { tenantId: one.id } },
      { name: 'sweep-stuck-webhook-events', data: { tenantId: two.id } },
    ]);
    const completed = (id: string | undefined) => find((l) => l.msg === 'job completed' && l.jobId === id)[0];
    await waitUntil(async () => completed(jobOne.id) && completed(jobTwo.id), 'both sweep jobs to complete');

    const sweepLine = (requeued: number) => find((l) => l.msg === 'webhook sweep: stuck events handled' && l.requeued === requeued);
    for (const [job, requeued] of [
      [jobOne, 1],
      [jobTwo, 2],
    ] as const) {
      const lines = sweepLine(requeued).filter((l) => l.jobId === job.id);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ queue: 'maintenance', job: 'sweep-stuck-webhook-events', attempt: 1 });
      expect(lines[0].requestId).toBeUndefined();
      expectOnce(lines[0], 'jobId', 'queue', 'job', 'attempt');
      // The dispatcher's own line (workers/worker.ts) now takes the fields from the context too.
      expect(completed(job.id)).toMatchObject({ queue: 'maintenance', job: 'sweep-stuck-webhook-events', attempt: 1, ms: expect.any(Number) });
      expectOnce(completed(job.id), 'jobId', 'queue', 'job', 'attempt');
    }
  });

  it('a failed job’s line names it once', async () => {
    const job = await getQueue(QUEUES.maintenance).add('no-such-job', {});
    const failed = await waitUntil(async () => find((l) => l.msg === 'job failed' && l.jobId === job.id)[0], 'the job failed line');
    expect(failed).toMatchObject({ queue: 'maintenance', job: 'no-such-job' });
    expectOnce(failed, 'jobId', 'queue', 'job');
  });
});
