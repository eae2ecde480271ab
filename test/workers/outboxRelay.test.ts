import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { config } from '../../shared/config';
import { db } from '../../shared/db';
import { OUTBOX_CHANNEL, relayOutbox } from '../../shared/outbox';
import { getQueue } from '../../shared/queues';
import { startOutboxRelay, type OutboxRelay } from '../../workers/outboxRelay';
import { waitUntil } from '../helpers/waitUntil';

/**
 * The worker's outbox relay (workers/outboxRelay.ts) against the real PostgreSQL and Redis: rows
 * written with a notification, as the webhook store writes them, are queued without the
 * recurring relay-outbox job (not scheduled here; it runs every 10 s). Jobs go to the
 * maintenance queue, where no worker of this file takes them.
 */
const prefix = () => config().redisPrefix;
const appName = () => `accounting:outbox-relay:${prefix()}`.slice(0, 63);
let relay: OutboxRelay;

/** One statement: the row and its notification, delivered on commit (ingest.ts writes the same). */
async function writeNotified(jobId: string, opts: { notify?: boolean; prefix?: string } = {}): Promise<void> {
  const p = opts.prefix ?? prefix();
  await db().raw(
    `with ob as (insert into outbox (prefix, queue, job_name, job_id, payload) values (?, 'maintenance', 'noop', ?, '{"n":1}') returning id)
     select (select count(*) from (select pg_notify(?, ?) from ob where ?) n)`,
    [p, jobId, OUTBOX_CHANNEL, p, opts.notify !== false],
  );
}

const listening = () =>
  waitUntil(
    async () => {
      const { rows } = await db().raw(`select pid from pg_stat_activity where application_name = ? and query ilike 'listen%'`, [appName()]);
      return rows[0]?.pid as number | undefined;
    },
    'the relay to listen',
    5_000,
    25,
  );

const sentAt = async (jobId: string) => (await db()('outbox').where({ jobId }).first())?.enqueuedAt as Date | null | undefined;

beforeAll(async () => {
  relay = startOutboxRelay(config());
  await listening();
});
afterAll(async () => {
  await relay?.close();
});

it('a notified row is queued at once and marked, without the recurring relay; other prefixes are not touched', async () => {
  const id = `relay-${randomUUID()}`;
  const foreign = `relay-${randomUUID()}`;
  await writeNotified(foreign, { prefix: `${prefix()}-other` });
  await writeNotified(id);
  const job = await waitUntil(() => getQueue('maintenance').getJob(id), 'the job', 3_000, 25);
  expect(job.data).toEqual({ n: 1 });
  expect(await waitUntil(() => sentAt(id), 'the mark', 5_000, 25)).toBeInstanceOf(Date);
  expect(await sentAt(foreign)).toBeNull();
  await db()('outbox').where({ jobId: foreign }).delete();
});

it('under a burst the notifications collapse into a few passes: one addBulk and one UPDATE for many rows', async () => {
  const ids = Array.from({ length: 200 }, () => `relay-${randomUUID()}`);
  await Promise.all(ids.map((id) => writeNotified(id)));
  await waitUntil(
    async () => Number((await db()('outbox').whereIn('jobId', ids).whereNull('enqueuedAt').count({ n: '*' }))[0].n) === 0,
    'every row sent',
    10_000,
    25,
  );
  // A pass marks its rows in one UPDATE, so its rows share one enqueued_at (the transaction's now()).
  const [{ passes }] = await db()('outbox').whereIn('jobId', ids).countDistinct({ passes: 'enqueuedAt' });
  expect(Number(passes)).toBeLessThan(ids.length / 5);
  const jobs = await Promise.all(ids.map((id) => getQueue('maintenance').getJob(id)));
  expect(jobs.every((j) => j?.data.n === 1)).toBe(true);
});

it('a lost connection is re-established, and rows committed while nobody listened are sent after it', async () => {
  const pid = await listening();
  await db().raw('select pg_terminate_backend(?)', [pid]);
  // Written while the relay is disconnected (it waits 500 ms before reconnecting), with no
  // notification at all: only the catch-up pass on reconnect can send it.
  const missed = `relay-${randomUUID()}`;
  await writeNotified(missed, { notify: false });
  await waitUntil(() => getQueue('maintenance').getJob(missed), 'the missed row to be sent', 10_000, 25);
  const newPid = await listening();
  expect(newPid).not.toBe(pid);
  const id = `relay-${randomUUID()}`;
  await writeNotified(id);
  await waitUntil(() => getQueue('maintenance').getJob(id), 'the job after reconnecting', 3_000, 25);
});

it('a row Redis refuses keeps its error and holds back no other row of its batch', async () => {
  const ids = [`relay-${randomUUID()}`, `${Date.now()}`, `relay-${randomUUID()}`]; // BullMQ refuses integer job ids
  const rows = await db()('outbox')
    .insert(ids.map((jobId) => ({ prefix: prefix(), queue: 'maintenance', jobName: 'noop', jobId, payload: JSON.stringify({ n: 2 }) })))
    .returning('id');
  expect(await relayOutbox({ ids: rows.map((r) => String(r.id)) })).toBe(2);
  const after = await db()('outbox').whereIn('jobId', ids).orderBy('id');
  expect(after.map((r) => [r.enqueuedAt !== null, r.attempts])).toEqual([
    [true, 1],
    [false, 1],
    [true, 1],
  ]);
  expect(after[1].lastError).toMatch(/integer/);
  expect((await getQueue('maintenance').getJob(ids[2]))?.data).toEqual({ n: 2 });
  await db()('outbox').where({ jobId: ids[1] }).delete();
});
