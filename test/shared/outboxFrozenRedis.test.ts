import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { startPrivateRedis, type Service } from '../../scripts/services';

/**
 * A Redis that stops answering while its connection stays up (SIGSTOP: a frozen server, as when
 * its host swaps or stalls). The client still says "ready", so only the bounded add notices. The
 * relay must give up after one bounded wait for the batch and one for a single row, not wait 2 s
 * for every row while it holds their locks. This file's producer connection points at a private
 * redis-server (set before any shared module reads the configuration).
 */
let redis: Service;
let pid: number;

beforeAll(async () => {
  redis = await startPrivateRedis();
  process.env.REDIS_URL = redis.url;
  const probe = new Redis(redis.url);
  pid = Number(/process_id:(\d+)/.exec(await probe.info('server'))![1]);
  probe.disconnect();
});
afterAll(async () => {
  if (pid) process.kill(pid, 'SIGCONT');
  const { closeQueues } = await import('../../shared/queues');
  const { closeProducerRedis } = await import('../../shared/redis');
  await closeQueues();
  await closeProducerRedis();
  await redis?.stop();
});

it('a frozen Redis costs the relay one timed-out batch and one timed-out row; the rest stay pending untouched and go out once it answers', async () => {
  const { relayOutbox } = await import('../../shared/outbox');
  const { db } = await import('../../shared/db');
  const { getQueue } = await import('../../shared/queues');
  const { producerRedis, redisReady } = await import('../../shared/redis');
  expect(await redisReady(producerRedis())).toBe(true);

  const jobIds = [1, 2, 3].map(() => `frozen-${randomUUID()}`);
  const rows = await db()('outbox')
    .insert(jobIds.map((jobId) => ({ prefix: process.env.REDIS_PREFIX, queue: 'maintenance', jobName: 'noop', jobId, payload: '{"n":3}' })))
    .returning('id');
  const ids = rows.map((r) => String(r.id));

  process.kill(pid, 'SIGSTOP');
  try {
    expect(await relayOutbox({ ids })).toBe(0);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  const after = await db()('outbox').whereIn('id', ids).orderBy('id');
  expect(after.map((r) => [r.enqueuedAt, r.attempts, r.lastError])).toEqual([
    [null, 1, 'queue add timed out'],
    [null, 0, null],
    [null, 0, null],
  ]);

  // Redis answers again (and runs the adds it had buffered): the next relay sends all three, and
  // the job ids keep each job single.
  expect(await relayOutbox({ ids })).toBe(3);
  const jobs = await Promise.all(jobIds.map((id) => getQueue('maintenance').getJob(id)));
  expect(jobs.map((j) => j?.data)).toEqual([{ n: 3 }, { n: 3 }, { n: 3 }]);
  expect(await getQueue('maintenance').count()).toBe(3);
});
