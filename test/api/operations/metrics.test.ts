import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';

let open: Awaited<ReturnType<typeof startTestServer>>;
let guarded: Awaited<ReturnType<typeof startTestServer>>;
beforeAll(async () => {
  open = await startTestServer();
  guarded = await startTestServer({ METRICS_TOKEN: 'scrape-secret-123' });
});
afterAll(async () => {
  await open.close();
  await guarded.close();
});

it('exposes request durations by route pattern and queue depths', async () => {
  const http = client(open.url);
  await http.get('/health');
  await http.get('/api/nothing');
  const res = await http.get('/metrics');
  expect(res.status).toBe(200);
  expect(res.body).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/health",status="200"\} \d+/);
  expect(res.body).toMatch(/route="unmatched",status="404"/);
  expect(res.body).toMatch(/queue_jobs\{queue="documents",state="waiting"\} \d+/);
  expect(res.body).toMatch(/# TYPE job_duration_seconds histogram/);
});

it('with METRICS_TOKEN set, scraping needs the bearer token', async () => {
  const http = client(guarded.url);
  expect((await http.get('/metrics')).status).toBe(401);
  expect((await http.get('/metrics', { token: 'wrong' })).status).toBe(401);
  expect((await http.get('/metrics', { token: 'scrape-secret-123' })).status).toBe(200);
});
