import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam, TEST_PASSWORD } from '../../helpers/factories';
import { startWorkers } from '../../../workers/worker';
import { ALL_QUEUES, getQueue, QUEUES } from '../../../shared/queues';

/**
 * Who opens Bull Board (docs/operations.md, "Bull Board"): operators with BULL_BOARD_USER /
 * BULL_BOARD_PASSWORD, never a tenant login — not even a tenant admin's, because the board shows
 * and changes every tenant's jobs. Without operator credentials configured the board is off.
 * Without a browser: the same checks as test/browser, so they run where Chromium is missing.
 */
const OPERATOR = { user: 'operator', password: `pw-${randomUUID()}` };
const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const asOperator = { headers: basic(OPERATOR.user, OPERATOR.password) };

let on: Awaited<ReturnType<typeof startTestServer>>;
let off: Awaited<ReturnType<typeof startTestServer>>;
const failed: Job[] = [];

beforeAll(async () => {
  on = await startTestServer({ BULL_BOARD_USER: OPERATOR.user, BULL_BOARD_PASSWORD: OPERATOR.password });
  off = await startTestServer({ BULL_BOARD_USER: '', BULL_BOARD_PASSWORD: '' });
  // Two really failed jobs (no handler → UnrecoverableError), then no worker: a retried job stays waiting.
  const workers = await startWorkers({ queues: [QUEUES.maintenance], schedule: false });
  for (let i = 0; i < 2; i++)
    failed.push(await getQueue(QUEUES.maintenance).add('board-test-unknown-job', {}, { jobId: `board-${i}-${randomUUID()}`, attempts: 1 }));
  const deadline = Date.now() + 20_000;
  while (!(await Promise.all(failed.map((j) => j.getState()))).every((s) => s === 'failed')) {
    if (Date.now() > deadline) throw new Error('jobs did not fail in time');
    await new Promise((r) => setTimeout(r, 100));
  }
  await workers.close();
});
afterAll(async () => {
  await on?.close();
  await off?.close();
});

it('is off (404 with the reason) when no operator credentials are configured', async () => {
  for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
    const res = await client(off.url).get(path, asOperator);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', message: expect.stringMatching(/BULL_BOARD_USER/) });
  }
});

it('refuses anonymous clients, wrong passwords and tenant logins, including a tenant admin', async () => {
  const { admin } = await createTeam();
  const http = client(on.url);
  for (const path of ['/admin/queues', '/admin/queues/api/queues', `/admin/queues/api/queues/${QUEUES.maintenance}/${failed[0].id}/retry`]) {
    const method = path.endsWith('/retry') ? 'PUT' : 'GET';
    for (const opts of [{}, { headers: basic(OPERATOR.user, 'wrong') }, { headers: basic(admin.email, TEST_PASSWORD) }, { token: admin.token }]) {
      const res = await http.request(method, path, opts);
      expect(res.status, `${method} ${path} ${JSON.stringify(opts).slice(0, 40)}`).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm="Bull Board"/);
      expect(res.body.error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    }
  }
  // Nothing was retried by the refused calls.
  expect(await failed[0].getState()).toBe('failed');
});

it('an operator sees every queue with its counts, retries one failed job and cleans the rest', async () => {
  const http = client(on.url);
  const page = await http.get('/admin/queues', asOperator);
  expect(page.status).toBe(200);
  expect(page.body).toContain('Accounting queues');

  const list = await http.get('/admin/queues/api/queues', asOperator);
  expect(list.status).toBe(200);
  const queues = list.body.queues as { name: string; counts: Record<string, number> }[];
  expect(queues.map((q) => q.name).sort()).toEqual([...ALL_QUEUES].sort());
  expect(queues.find((q) => q.name === QUEUES.maintenance)!.counts.failed).toBe(2);

  const retry = await http.request('PUT', `/admin/queues/api/queues/${QUEUES.maintenance}/${failed[0].id}/retry`, asOperator);
  expect(retry.status, JSON.stringify(retry.body)).toBeLessThan(300);
  expect(await failed[0].getState()).toBe('waiting');

  // "Clean all" spares jobs that failed in the last 5 s (Bull Board's grace time); a job's own
  // clean removes it at once.
  const clean = await http.request('PUT', `/admin/queues/api/queues/${QUEUES.maintenance}/${failed[1].id}/clean`, asOperator);
  expect(clean.status, JSON.stringify(clean.body)).toBeLessThan(300);
  expect(await getQueue(QUEUES.maintenance).getJob(String(failed[1].id))).toBeUndefined();
  expect(await getQueue(QUEUES.maintenance).getFailedCount()).toBe(0);
});
