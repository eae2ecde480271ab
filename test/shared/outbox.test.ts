import { expect, it } from 'vitest';
import { runInTransaction, enqueueAfterCommit, relayOutbox } from '../../shared/outbox';
import { db } from '../../shared/db';
import { getQueue } from '../../shared/queues';
import { randomUUID } from 'node:crypto';

it('a committed transaction relays its job; a rolled-back one leaves neither row nor job', async () => {
  const okId = `test-${randomUUID()}`;
  await runInTransaction(async (trx) => {
    await enqueueAfterCommit(trx, { queue: 'maintenance', name: 'noop', jobId: okId, data: { n: 1 } });
  });
  const job = await getQueue('maintenance').getJob(okId);
  expect(job?.data).toEqual({ n: 1 });
  expect(await db()('outbox').where({ jobId: okId }).whereNotNull('enqueuedAt').first()).toBeDefined();

  const badId = `test-${randomUUID()}`;
  await expect(
    runInTransaction(async (trx) => {
      await enqueueAfterCommit(trx, { queue: 'maintenance', name: 'noop', jobId: badId, data: {} });
      throw new Error('rollback');
    }),
  ).rejects.toThrow('rollback');
  expect(await getQueue('maintenance').getJob(badId)).toBeUndefined();
  expect(await db()('outbox').where({ jobId: badId }).first()).toBeUndefined();
});

it('rows the relay could not send stay pending and go out on the next relay, once', async () => {
  const id = `test-${randomUUID()}`;
  const [row] = await db()('outbox')
    .insert({ prefix: process.env.REDIS_PREFIX, queue: 'maintenance', jobName: 'noop', jobId: id, payload: JSON.stringify({ later: true }) })
    .returning('id');
  expect(await relayOutbox({ ids: [String(row.id)] })).toBe(1);
  expect(await relayOutbox({ ids: [String(row.id)] })).toBe(0);
  expect((await getQueue('maintenance').getJob(id))?.data).toEqual({ later: true });
});
