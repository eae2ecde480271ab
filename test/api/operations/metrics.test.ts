import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { bankDelivery, bankEvent, deliver, install, waitForLogRows } from '../../helpers/webhookFactory';
import { startWorkers, type RunningWorkers } from '../../../workers/worker';
import { getQueue, QUEUES } from '../../../shared/queues';
import { createRedis } from '../../../shared/redis';
import { config } from '../../../shared/config';
import { waitUntil } from '../../helpers/waitUntil';

/**
 * Metrics from real traffic: requests through a listening server, a maintenance job run by a real
 * worker, a webhook delivery processed by the webhooks worker, and queue states read from Redis.
 * The workers run in this process, so the API's /metrics also carries their job durations.
 */
let open: Awaited<ReturnType<typeof startTestServer>>;
let guarded: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;
let holder: Worker | undefined;
let release: () => void = () => {};

beforeAll(async () => {
  open = await startTestServer();
  guarded = await startTestServer({ METRICS_TOKEN: 'scrape-secret-123' });
  workers = await startWorkers({ queues: [QUEUES.maintenance, QUEUES.webhooks], schedule: false });
});
afterAll(async () => {
  release();
  await holder?.close();
  await workers?.close();
  await open?.close();
  await guarded?.close();
});

type Sample = { name: string; labels: Record<string, string>; value: number };

/** Prometheus text format → samples (enough of the format for prom-client's output). */
function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the one sample with exactly these labels (extra labels such as le must match too). */
function value(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  const hits = samples.filter(
    (s) => s.name === name && Object.keys(s.labels).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  expect(hits.length, `${name}${JSON.stringify(labels)}`).toBeLessThanOrEqual(1);
  return hits[0]?.value;
}

async function scrape(): Promise<Sample[]> {
  const res = await client(open.url).get('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return parse(res.body);
}

it('reports labelled samples from real requests, jobs, queues and webhook deliveries', async () => {
  const { admin } = await createTeam();
  const http = client(open.url, { token: admin.token });

  // A real job through the API and the maintenance worker.
  const queued = await http.post('/api/maintenance/purge-customers');
  expect(queued.status).toBe(202);
  await waitUntil(async () => (await http.get(`/api/maintenance/jobs/${queued.body.jobId}`)).body.status === 'completed', 'the purge job to complete');
  // A job nobody handles fails for good (UnrecoverableError) on its first attempt.
  const doomed = await getQueue(QUEUES.maintenance).add('metrics-test-unknown-job', {}, { jobId: `metrics-doomed-${randomUUID()}`, attempts: 1 });
  await waitUntil(async () => (await doomed.getState()) === 'failed', 'the unknown job to fail');
  // Waiting: the email queue has no worker in this test. Active: a worker that holds its job.
  await getQueue(QUEUES.email).add('metrics-test-waiting', {}, { jobId: `metrics-waiting-${randomUUID()}` });
  const held = new Promise<void>((resolve) => (release = resolve));
  holder = new Worker(QUEUES.reports, () => held, { connection: createRedis('worker'), prefix: config().redisPrefix });
  await getQueue(QUEUES.reports).add('metrics-test-active', {}, { jobId: `metrics-active-${randomUUID()}` });
  await waitUntil(async () => (await getQueue(QUEUES.reports).getActiveCount()) === 1, 'the held job to be active');

  // A verified webhook delivery processed by the webhooks worker, and one with a bad signature.
  const secret = `bank-${randomUUID()}`;
  const team = await createTeam({ country: 'DE' });
  const installed = await install(open.url, team.admin.token, 'bank', { webhookSecret: secret });
  const ok = bankDelivery(secret, bankEvent({ amount: '12.34' }));
  expect((await deliver(open.url, installed.path, ok.body, ok.headers)).status).toBe(200);
  const [row] = await waitForLogRows(team.tenant.id, 'bank', 1);
  const forged = bankDelivery('not-the-secret', bankEvent());
  expect((await deliver(open.url, installed.path, forged.body, forged.headers)).status).toBe(400);

  // And requests that fail: unauthenticated, and a path no route matches.
  expect((await client(open.url).get('/api/customers')).status).toBe(401);
  expect((await client(open.url).get('/api/nothing')).status).toBe(404);

  // Counters move just after the state a test can observe (the row commits, then the job
  // completes, then the worker's event fires): scrape until the last of them is in.
  const s = await waitUntil(async () => {
    const samples = await scrape();
    const has = (name: string, labels: Record<string, string>) => value(samples, name, labels) !== undefined;
    return has('job_duration_seconds_count', { queue: QUEUES.webhooks, name: 'process-webhook-event', outcome: 'completed' }) &&
      has('job_duration_seconds_count', { queue: QUEUES.maintenance, name: 'purge-deleted-customers', outcome: 'completed' }) &&
      has('job_duration_seconds_count', { queue: QUEUES.maintenance, name: 'metrics-test-unknown-job', outcome: 'failed' }) &&
      has('webhook_events_total', { provider: 'bank', status: 'processed' })
      ? samples
      : undefined;
  }, 'job and webhook samples');
  // HTTP request durations by route pattern (never the raw path) and status.
  const count = (route: string, status: string, method = 'GET') => value(s, 'http_request_duration_seconds_count', { method, route, status }) ?? 0;
  expect(count('/api/maintenance/purge-customers', '202', 'POST')).toBe(1);
  expect(count('/api/maintenance/jobs/:key', '200')).toBeGreaterThanOrEqual(1);
  expect(count('/api/payment-import/:provider/:token', '200', 'POST')).toBe(1);
  expect(count('/api/payment-import/:provider/:token', '400', 'POST')).toBe(1);
  expect(count('/api/customers', '401')).toBe(1);
  expect(count('unmatched', '404')).toBe(1);
  // A scrape is measured after it answered, so the next scrape shows it, under its own route.
  expect(value(await scrape(), 'http_request_duration_seconds_count', { method: 'GET', route: '/metrics', status: '200' })).toBeGreaterThanOrEqual(1);
  expect(value(s, 'http_request_duration_seconds_bucket', { method: 'POST', route: '/api/maintenance/purge-customers', status: '202', le: '+Inf' })).toBe(1);
  expect(s.some((x) => x.labels.route?.includes(queued.body.jobId))).toBe(false);

  // Queue depth, active and failed per queue, from Redis.
  expect(value(s, 'queue_jobs', { queue: QUEUES.email, state: 'waiting' })).toBe(1);
  expect(value(s, 'queue_jobs', { queue: QUEUES.reports, state: 'active' })).toBe(1);
  expect(value(s, 'queue_jobs', { queue: QUEUES.maintenance, state: 'failed' })).toBe(1);
  expect(value(s, 'queue_jobs', { queue: QUEUES.maintenance, state: 'completed' })).toBe(1);
  expect(value(s, 'queue_jobs', { queue: QUEUES.webhooks, state: 'completed' })).toBe(1);
  expect(value(s, 'queue_jobs', { queue: QUEUES.documents, state: 'waiting' })).toBe(0);

  // Job durations per queue, job name and outcome.
  expect(value(s, 'job_duration_seconds_count', { queue: QUEUES.maintenance, name: 'purge-deleted-customers', outcome: 'completed' })).toBe(1);
  expect(value(s, 'job_duration_seconds_count', { queue: QUEUES.maintenance, name: 'metrics-test-unknown-job', outcome: 'failed' })).toBe(1);
  expect(value(s, 'job_duration_seconds_count', { queue: QUEUES.webhooks, name: 'process-webhook-event', outcome: 'completed' })).toBe(1);

  // Webhook outcomes by provider and status.
  expect(row.status).toBe('processed');
  expect(value(s, 'webhook_events_total', { provider: 'bank', status: 'processed' })).toBe(1);
  expect(value(s, 'webhook_events_total', { provider: 'bank', status: 'invalid_signature' })).toBe(1);
});

it('outbox rows not yet handed to Redis are counted per queue with the age of the oldest', async () => {
  const { db } = await import('../../../shared/db');
  // No notification, so no relay sends it during the test: as a row waits while no worker runs.
  const jobId = `metrics-outbox-${randomUUID()}`;
  await db()('outbox').insert({
    prefix: config().redisPrefix,
    queue: QUEUES.email,
    jobName: 'noop',
    jobId,
    payload: '{}',
    createdAt: db().raw("now() - interval '2 minutes'"),
  });
  try {
    const s = await waitUntil(async () => {
      const samples = await scrape();
      return value(samples, 'outbox_pending', { queue: QUEUES.email }) === 1 ? samples : undefined;
    }, 'the outbox gauge');
    expect(value(s, 'outbox_oldest_pending_seconds', { queue: QUEUES.email })).toBeGreaterThanOrEqual(120);
    expect(value(s, 'outbox_pending', { queue: QUEUES.webhooks })).toBeUndefined();
  } finally {
    await db()('outbox').where({ jobId }).delete();
  }
});

it('with METRICS_TOKEN set, scraping needs the bearer token, even from loopback', async () => {
  const http = client(guarded.url);
  const none = await http.get('/metrics');
  expect(none.status).toBe(401);
  expect(none.body.error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  expect((await http.get('/metrics', { token: 'wrong' })).status).toBe(401);
  const ok = await http.get('/metrics', { token: 'scrape-secret-123' });
  expect(ok.status).toBe(200);
  expect(ok.body).toMatch(/# TYPE http_request_duration_seconds histogram/);
});
