import { afterAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { QueueEvents } from 'bullmq';
import { config } from '../../shared/config';
import { db } from '../../shared/db';
import { OUTBOX_RETENTION_DAYS, purgeSentOutbox } from '../../shared/outbox';
import { getQueue, QUEUES } from '../../shared/queues';
import { createRedis } from '../../shared/redis';
import { startWorkers } from '../../workers/worker';

/**
 * Sent outbox rows are purged after OUTBOX_RETENTION_DAYS by a daily maintenance job: old sent
 * rows of this deployment go, recent ones, pending ones (work not done) and other deployments'
 * rows stay. The job runs in a real worker, as scheduled (with the other recurring jobs, so its
 * relay-outbox would send a pending row: the pending case is checked without a worker). Rows are
 * tagged per test, because the test database is shared with other files.
 */
const tag = () => `purge-${randomUUID()}`;
const daysAgo = (d: number) => db().raw(`now() - make_interval(days => ?)`, [d]);

async function row(jobIdPrefix: string, opts: { sentDaysAgo?: number; createdDaysAgo?: number; prefix?: string }) {
  await db()('outbox').insert({
    prefix: opts.prefix ?? config().redisPrefix,
    queue: 'maintenance',
    jobName: 'noop',
    jobId: `${jobIdPrefix}-${randomUUID()}`,
    payload: '{}',
    createdAt: daysAgo(opts.createdDaysAgo ?? opts.sentDaysAgo ?? 0),
    enqueuedAt: opts.sentDaysAgo === undefined ? null : daysAgo(opts.sentDaysAgo),
  });
}
const left = async (jobIdPrefix: string) =>
  (await db()('outbox').where('jobId', 'like', `${jobIdPrefix}-%`).select('prefix', 'enqueuedAt')).map((r) => [
    r.prefix === config().redisPrefix ? 'ours' : 'other',
    r.enqueuedAt === null ? 'pending' : 'sent',
  ]);

afterAll(async () => {
  await db()('outbox').where('jobId', 'like', 'purge-%').delete();
});

it('the daily job, run by a worker, deletes only sent rows of this deployment older than the retention', async () => {
  const t = tag();
  const old = OUTBOX_RETENTION_DAYS + 1;
  for (let i = 0; i < 3; i++) await row(t, { sentDaysAgo: old });
  await row(t, { sentDaysAgo: OUTBOX_RETENTION_DAYS - 1 });
  await row(t, { sentDaysAgo: old, prefix: `${config().redisPrefix}-other` });

  const workers = await startWorkers({ queues: ['maintenance'], relay: false });
  const events = new QueueEvents(QUEUES.maintenance, { connection: createRedis('worker'), prefix: config().redisPrefix });
  try {
    // Declared with the other recurring jobs, at 03:30 Vienna time.
    const schedulers = await getQueue(QUEUES.maintenance).getJobSchedulers();
    expect(schedulers.find((s) => s.key === 'purge-sent-outbox-daily')).toMatchObject({
      name: 'purge-sent-outbox',
      pattern: '30 3 * * *',
      tz: 'Europe/Vienna',
    });

    await events.waitUntilReady();
    const job = await getQueue(QUEUES.maintenance).add('purge-sent-outbox', {});
    expect(await job.waitUntilFinished(events, 30_000)).toEqual({ purged: 3 });
  } finally {
    await events.close();
    await workers.close();
  }
  expect((await left(t)).sort()).toEqual([
    ['other', 'sent'],
    ['ours', 'sent'],
  ]);
});

it('purges in batches until none is left, and never a pending row however old', async () => {
  const t = tag();
  for (let i = 0; i < 5; i++) await row(t, { sentDaysAgo: OUTBOX_RETENTION_DAYS + 2 });
  await row(t, { createdDaysAgo: 30 }); // pending for a month: an alert (outbox_oldest_pending_seconds), never garbage
  expect(await purgeSentOutbox({ batch: 2 })).toBe(5);
  expect(await left(t)).toEqual([['ours', 'pending']]);
});
