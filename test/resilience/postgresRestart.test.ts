import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { spawnEntry, waitForOutput, exitOf } from '../helpers/processes';
import { ensureDatabase, freePort } from '../../scripts/services';
import { uniqueEmail } from '../api/auth/authHelpers';
import { bounded, isEnvelope, restartablePostgres, waitUntil } from './faults';

/**
 * PostgreSQL restarts under a running API process (its own embedded PostgreSQL in a temp dir, so
 * stopping it disturbs no other test file). While it is down: /ready says so, requests fail fast
 * in the error envelope. When it is back on the same port the API serves again, no restart.
 */
let pgServer: Awaited<ReturnType<typeof restartablePostgres>>;
let api: ChildProcess & { output: () => string };
let base: string;
let baseDir: string;

beforeAll(async () => {
  // Under /tmp, whose parent directory startEmbeddedPostgres may chown to the PostgreSQL user.
  baseDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acct-pg-restart-'));
  pgServer = await restartablePostgres(path.join(baseDir, 'data'));
  const databaseUrl = await ensureDatabase(pgServer.url, 'acct_resilience');
  // migrateLatest loads .ts migrations; vitest's module loader cannot, so the release step runs them.
  const migrate = spawnEntry('scripts/migrate.ts', { DATABASE_URL: databaseUrl });
  expect((await exitOf(migrate)).code, migrate.output()).toBe(0);
  const port = await freePort();
  api = spawnEntry('api/server.ts', { PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: databaseUrl });
  base = `http://127.0.0.1:${port}`;
  await waitForOutput(api, /API listening/);
}, 120_000);

afterAll(async () => {
  if (api && api.exitCode === null) {
    api.kill('SIGTERM');
    await exitOf(api);
  }
  await pgServer?.remove();
  if (baseDir) fs.rmSync(baseDir, { recursive: true, force: true });
});

describe('PostgreSQL restarts while the API serves', () => {
  it('down: /ready 503 and requests fail fast in the envelope; back on the same port: served again without an API restart', async () => {
    const reg = await bounded(base, 'POST', '/api/auth/register', {
      body: { email: uniqueEmail('pg'), password: 'a-long-enough-password', name: 'Paula Postgres', companyName: 'Neustart GmbH' },
    });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    const token = reg.body.token as string;
    const created = await bounded(base, 'POST', '/api/customers', { token, body: { name: 'Vorher KG' } });
    expect(created.status).toBe(201);
    expect((await bounded(base, 'GET', '/ready')).status).toBe(200);

    await pgServer.stop();

    // Readiness answers within its own 2 s check timeout (bounded here at 10 s).
    const ready = await bounded(base, 'GET', '/ready');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe('5');
    expect(ready.body).toEqual({ status: 'not_ready', checks: { postgres: 'down', redis: 'ok' } });
    expect((await bounded(base, 'GET', '/health')).status).toBe(200);

    // Every kind of request fails fast, in the envelope, as 503 SERVICE_UNAVAILABLE with
    // Retry-After — never a hang, never a raw driver message. (Reads, writes, and auth, whose
    // user check also needs the database.)
    const attempts = [
      await bounded(base, 'GET', '/api/customers', { token }),
      await bounded(base, 'POST', '/api/customers', { token, body: { name: 'Während KG' } }),
      await bounded(base, 'GET', `/api/customers/${created.body.id}`, { token }),
      await bounded(base, 'POST', '/api/auth/login', { body: { email: 'nobody@example.test', password: 'whatever-password' } }),
    ];
    for (const res of attempts) {
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(isEnvelope(res), JSON.stringify(res.body)).toBe(true);
      expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(res.headers.get('retry-after')).toBe('5');
      expect(JSON.stringify(res.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres|knex|pg_/i);
    }

    await pgServer.start();

    // The pool reconnects on its own: no API restart.
    await waitUntil(async () => (await bounded(base, 'GET', '/ready')).status === 200, '/ready to turn green', 20_000, 250);
    const list = await bounded(base, 'GET', '/api/customers', { token });
    expect(list.status).toBe(200);
    const after = await bounded(base, 'POST', '/api/customers', { token, body: { name: 'Nachher KG' } });
    expect(after.status).toBe(201);
    const names = (await bounded(base, 'GET', '/api/customers', { token })).body;
    expect(JSON.stringify(names)).toContain('Vorher KG');
    expect(JSON.stringify(names)).toContain('Nachher KG');
    // The API process never died.
    expect(api.exitCode).toBeNull();
  }, 90_000);
});
