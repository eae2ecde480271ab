import { afterEach, describe, expect, it } from 'vitest';
import net from 'node:net';
import os from 'node:os';
import type http from 'node:http';
import { loadConfig } from '../../../shared/config';
import { startMetricsServer } from '../../../shared/metrics';
import { exitOf, spawnEntry, waitForOutput } from '../../helpers/processes';

/**
 * Who may read metrics: the worker's own /metrics listener (loopback by default, METRICS_TOKEN
 * when set) and the production rule that METRICS_TOKEN must be configured.
 */
const TOKEN = 'worker-scrape-token-0123456789';

/** A non-loopback IPv4 address of this machine, to connect "from the network" (absent on some sandboxes). */
const externalIp = Object.values(os.networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

const get = (url: string, token?: string) => fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
const refused = (url: string) =>
  fetch(url).then(
    () => 'answered',
    (err: Error & { cause?: { code?: string } }) => err.cause?.code ?? err.message,
  );

describe('configuration', () => {
  const prod = { NODE_ENV: 'production', JWT_ACCESS_SECRET: 'p'.repeat(40), ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };

  it('production needs METRICS_TOKEN (16+ characters); development and tests do not', () => {
    expect(() => loadConfig(prod)).toThrow(/METRICS_TOKEN must be set to at least 16 characters in production/);
    expect(() => loadConfig({ ...prod, METRICS_TOKEN: '' })).toThrow(/METRICS_TOKEN/);
    expect(() => loadConfig({ ...prod, METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN/);
    expect(loadConfig({ ...prod, METRICS_TOKEN: TOKEN }).metricsToken).toBe(TOKEN);
    expect(loadConfig({}).metricsToken).toBeNull();
    expect(loadConfig({ NODE_ENV: 'test' }).metricsToken).toBeNull();
  });

  it('WORKER_NICE is a nice value from 0 to 19, 10 by default', () => {
    expect(loadConfig({}).workerNice).toBe(10);
    expect(loadConfig({ WORKER_NICE: '0' }).workerNice).toBe(0);
    expect(() => loadConfig({ WORKER_NICE: '20' })).toThrow(/WORKER_NICE/);
    expect(() => loadConfig({ WORKER_NICE: '-5' })).toThrow(/WORKER_NICE/);
  });

  it('the worker metrics listener binds to loopback unless WORKER_METRICS_HOST says otherwise', () => {
    expect(loadConfig({}).workerMetricsHost).toBe('127.0.0.1');
    expect(loadConfig({ WORKER_METRICS_HOST: '10.0.0.5' }).workerMetricsHost).toBe('10.0.0.5');
  });

  it('an API process in production without METRICS_TOKEN exits at start with one line naming it', { timeout: 120_000 }, async () => {
    const api = spawnEntry('api/server.ts', { ...prod, METRICS_TOKEN: '', PORT: '0' });
    expect((await exitOf(api)).code).toBe(2);
    const lines = api
      .output()
      .trim()
      .split('\n')
      .filter((l) => l.includes('METRICS_TOKEN'));
    expect(lines).toEqual(['Invalid configuration: METRICS_TOKEN must be set to at least 16 characters in production']);
  });
});

describe('startMetricsServer (the worker listener)', () => {
  it('with a token: 401 without or with a wrong bearer token, 200 with it; only GET /metrics exists', async () => {
    const s = await startMetricsServer({ port: 0, host: '127.0.0.1', token: TOKEN });
    servers.push(s);
    const none = await get(`${s.url}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await none.json()).toEqual({ error: { message: expect.any(String), code: 'UNAUTHORIZED', status: 401 } });
    expect((await get(`${s.url}/metrics`, 'wrong')).status).toBe(401);
    const ok = await get(`${s.url}/metrics`, TOKEN);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/# TYPE job_duration_seconds histogram/);
    expect((await get(`${s.url}/other`, TOKEN)).status).toBe(404);
    expect((await fetch(`${s.url}/metrics`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
  });

  it('by default it is not reachable from the network at all', async () => {
    const s = await startMetricsServer({ port: 0, host: loadConfig({}).workerMetricsHost, token: null });
    servers.push(s);
    expect((await get(`${s.url}/metrics`)).status).toBe(200);
    if (externalIp) expect(await refused(`http://${externalIp}:${(s.address() as net.AddressInfo).port}/metrics`)).toBe('ECONNREFUSED');
  });

  it.skipIf(!externalIp)('bound to every interface without a token, it still answers loopback clients only', async () => {
    const s = await startMetricsServer({ port: 0, host: '0.0.0.0', token: null });
    servers.push(s);
    const port = (s.address() as net.AddressInfo).port;
    expect((await get(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    expect((await get(`http://${externalIp}:${port}/metrics`)).status).toBe(404);
  });

  it.skipIf(!externalIp)('bound to every interface with a token, network clients need it', async () => {
    const s = await startMetricsServer({ port: 0, host: '0.0.0.0', token: TOKEN });
    servers.push(s);
    const url = `http://${externalIp}:${(s.address() as net.AddressInfo).port}/metrics`;
    expect((await get(url)).status).toBe(401);
    expect((await get(url, TOKEN)).status).toBe(200);
  });
});

it('a real worker process serves /metrics on WORKER_METRICS_PORT, loopback-bound and token-guarded; it runs at WORKER_NICE', { timeout: 150_000 }, async () => {
  const port = await freePort();
  // Its own Redis prefix: the child's workers must not take jobs of other tests.
  const worker = spawnEntry('workers/index.ts', {
    WORKER_METRICS_PORT: String(port),
    METRICS_TOKEN: TOKEN,
    WORKER_NICE: '7',
    REDIS_PREFIX: `${process.env.REDIS_PREFIX}_child`,
  });
  try {
    await waitForOutput(worker, /worker metrics listening/);
    expect(os.getPriority(worker.pid)).toBe(7);
    expect(worker.output()).not.toContain(TOKEN);
    expect((await get(`http://127.0.0.1:${port}/metrics`)).status).toBe(401);
    const ok = await get(`http://127.0.0.1:${port}/metrics`, TOKEN);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/queue_jobs\{queue="maintenance",state="waiting"\} \d+/);
    if (externalIp) expect(await refused(`http://${externalIp}:${port}/metrics`)).toBe('ECONNREFUSED');
  } finally {
    worker.kill('SIGTERM');
    await exitOf(worker);
  }
});
