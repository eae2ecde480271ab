import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server';
import { client } from '../helpers/http';
import { createTeam } from '../helpers/factories';
import { exitOf, spawnEntry, waitForOutput } from '../helpers/processes';
import { holdLocks } from '../helpers/heldLock';
import { deliver, expectLedgerBalanced, install, stripeDelivery, stripePaymentEvent, waitForLogRows } from '../helpers/webhookFactory';
import { db } from '../../shared/db';
import { startWorkers } from '../../workers/worker';

/**
 * A worker process killed with SIGKILL in the middle of the pipeline job. How it is held there,
 * deterministically and without any test-only code path: the test holds the row lock of the
 * expense account the job will post to (SELECT … FOR UPDATE); the job, having already inserted
 * the supplier and the invoice in its transaction, waits at auto-post (FOR SHARE on that account).
 * The test checks the job is blocked by exactly its lock, kills the process, releases the lock,
 * and starts another worker process. The dead transaction never commits; BullMQ sees the stalled
 * job once its lock expires (WORKER_LOCK_DURATION_MS, 3 s here) and the new worker runs it from the start.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
const children: ReturnType<typeof spawnEntry>[] = [];

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await server?.close();
});

afterEach(async () => {
  await expectLedgerBalanced();
});

const SECRET = 'whsec_test_crash_0123456789';

it('SIGKILL mid-job: the job is retried by another worker process and books exactly one invoice and one entry', async () => {
  const { tenant, admin } = await createTeam({ country: 'AT' });
  const { path } = await install(server.url, admin.token, 'stripe', { webhookSecret: SECRET });
  await client(server.url, { token: admin.token }).put('/api/connectors/stripe/settings', { autoPost: true });

  const lock = await holdLocks((trx) => trx('ledgerAccounts').where({ tenantId: tenant.id, number: '7890' }).forUpdate().first());
  try {
    // A short job lock, so the stalled job is handed to the next worker after seconds, not 30 s.
    const env = { REDIS_PREFIX: process.env.REDIS_PREFIX, LOG_LEVEL: 'info', WORKER_LOCK_DURATION_MS: '3000' };
    const first = spawnEntry('workers/index.ts', env);
    children.push(first);
    await waitForOutput(first, /workers started/);

    const { body, headers } = stripeDelivery(SECRET, stripePaymentEvent({ amount: 1500 }));
    expect((await deliver(server.url, path, body, headers)).status).toBe(200);

    // Wait until the job's transaction is blocked by our lock: it has written the invoice, uncommitted.
    await lock.blocked('the job to reach the auto-post step').catch((err: Error) => {
      throw new Error(`${err.message}:\n${first.output()}`);
    });
    first.kill('SIGKILL');
    expect((await exitOf(first)).signal).toBe('SIGKILL');
  } finally {
    await lock.release();
  }

  // The killed worker's transaction is gone: nothing was committed.
  await new Promise((r) => setTimeout(r, 300));
  expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(0);
  expect((await db()('webhookEvents').where({ tenantId: tenant.id }).first()).status).toBe('pending');

  const second = spawnEntry('workers/index.ts', { REDIS_PREFIX: process.env.REDIS_PREFIX, LOG_LEVEL: 'info', WORKER_LOCK_DURATION_MS: '3000' });
  children.push(second);
  await waitForOutput(second, /workers started/);
  const [row] = await waitForLogRows(tenant.id, 'stripe', 1, 100_000);
  expect(row.status).toBe('processed');

  expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(1);
  expect(await db()('suppliers').where({ tenantId: tenant.id })).toHaveLength(1);
  expect(await db()('journalEntries').where({ tenantId: tenant.id })).toHaveLength(1);
  await expectLedgerBalanced();

  second.kill('SIGTERM');
  await exitOf(second);
}, 150_000);

it('Redis down at ingest: the event is still stored with its outbox row and answered 200; a starting worker relays it', async () => {
  const { tenant, admin } = await createTeam();
  const { path } = await install(server.url, admin.token, 'stripe', { webhookSecret: SECRET });
  // An API process whose Redis is unreachable (nothing listens on port 1).
  const api = spawnEntry('api/server.ts', {
    REDIS_PREFIX: process.env.REDIS_PREFIX,
    REDIS_URL: 'redis://127.0.0.1:1',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
  });
  children.push(api);
  await waitForOutput(api, /API listening/);
  const port = JSON.parse(
    api
      .output()
      .split('\n')
      .find((l) => l.includes('API listening'))!,
  ).port as number;
  const { body, headers } = stripeDelivery(SECRET, stripePaymentEvent());
  const res = await deliver(`http://127.0.0.1:${port}`, path, body, headers);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toEqual({ received: true, status: 'pending' });
  api.kill('SIGTERM');
  await exitOf(api);

  const row = await db()('webhookEvents').where({ tenantId: tenant.id }).first();
  expect(row.status).toBe('pending');
  const outbox = await db()('outbox')
    .where({ jobId: `webhook-${row.id}` })
    .first();
  expect(outbox).toMatchObject({ queue: 'webhooks', enqueuedAt: null });

  // No relay-outbox schedule: the worker's own relay sends rows that waited while nobody listened.
  const workers = await startWorkers({ queues: ['webhooks'], schedule: false });
  try {
    const [done] = await waitForLogRows(tenant.id, 'stripe', 1);
    expect(done.status).toBe('processed');
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(1);
  } finally {
    await workers.close();
  }
}, 150_000);
