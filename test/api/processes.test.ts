import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { spawnEntry, exitOf, waitForOutput, repoRoot } from '../helpers/processes';
import { freePort } from '../../scripts/services';

describe('process entry points', () => {
  it('a bad variable stops the API at start-up with one line naming it', async () => {
    const child = spawnEntry('api/server.ts', { PORT: 'eighty', ENCRYPTION_KEY: 'short' });
    const { code } = await exitOf(child);
    expect(code).toBe(2);
    expect(child.output()).toMatch(/PORT must be a whole number/);
    expect(child.output()).toMatch(/ENCRYPTION_KEY must be 32 bytes/);
  });

  it('the Procfile runs node itself, as these tests spawn it (npm would not pass SIGTERM on); the release step exits 2 on a bad variable too', async () => {
    const procfile = Object.fromEntries(
      fs
        .readFileSync(path.join(repoRoot, 'Procfile'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(/:\s*/, 2) as [string, string]),
    );
    expect(procfile).toEqual({
      web: 'node scripts/serve.mjs web',
      worker: 'node scripts/serve.mjs worker',
      release: 'node --import tsx scripts/migrate.ts',
    });
    const release = spawnEntry('scripts/migrate.ts', { PORT: 'eighty' });
    expect((await exitOf(release)).code).toBe(2);
    expect(release.output()).toMatch(/PORT must be a whole number/);
  });

  it('the worker refuses a bad configuration the same way', async () => {
    const child = spawnEntry('workers/index.ts', { WORKER_CONCURRENCY: '0' });
    const { code } = await exitOf(child);
    expect(code).toBe(2);
    expect(child.output()).toMatch(/WORKER_CONCURRENCY must be between 1 and 100/);
  });

  it('/ready is 503 naming Redis when Redis is unreachable, and SIGTERM stops the API cleanly', async () => {
    const port = await freePort();
    const deadRedis = await freePort();
    const child = spawnEntry('api/server.ts', { PORT: String(port), HOST: '127.0.0.1', REDIS_URL: `redis://127.0.0.1:${deadRedis}` });
    try {
      await waitForOutput(child, /API listening/);
      const res = await fetch(`http://127.0.0.1:${port}/ready`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(await res.json()).toEqual({ status: 'not_ready', checks: { postgres: 'ok', redis: 'down' } });
      // Liveness does not depend on Redis.
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    const { code } = await exitOf(child);
    expect(code).toBe(0);
    expect(child.output()).toMatch(/API shutting down/);
  });

  it('the access log masks the secret token of a webhook URL', async () => {
    const port = await freePort();
    const child = spawnEntry('api/server.ts', { PORT: String(port), HOST: '127.0.0.1' });
    const token = 'whtok-must-never-be-logged-3f9a';
    try {
      await waitForOutput(child, /API listening/);
      const res = await fetch(`http://127.0.0.1:${port}/api/payment-import/stripe/${token}`, { method: 'POST', body: '{}' });
      expect(res.status).toBe(404);
      await waitForOutput(child, /payment-import\/stripe\/\[redacted\]/);
      // In another letter case the path does not route, but the segment may still be a real token.
      const upper = await fetch(`http://127.0.0.1:${port}/API/payment-import/stripe/${token}`, { method: 'POST', body: '{}' });
      expect(upper.status).toBe(404);
      await waitForOutput(child, /API\/payment-import\/stripe\/\[redacted\]/);
    } finally {
      child.kill('SIGTERM');
    }
    await exitOf(child);
    expect(child.output()).not.toContain(token);
  });

  it('the worker process starts its queues and shuts down gracefully on SIGTERM', async () => {
    const child = spawnEntry('workers/index.ts');
    await waitForOutput(child, /workers started/);
    child.kill('SIGTERM');
    expect(await exitOf(child)).toEqual({ code: 0, signal: null });
    expect(child.output()).toMatch(/finishing active jobs/);
  });
});
