import { afterAll, beforeAll } from 'vitest';
import { loadConfig, type Config } from '../../shared/config';
import { startServer, type RunningServer } from '../../api/server';
import { client, type TestClient } from './http';

/** A real API server on a random port, optionally with configuration overrides (env names). */
export async function startTestServer(envOverrides: Record<string, string> = {}): Promise<RunningServer & { cfg: Config }> {
  const cfg = loadConfig({ ...process.env, ...envOverrides, HOST: '127.0.0.1' });
  const running = await startServer(cfg, 0);
  return { ...running, cfg };
}

/**
 * The usual setup of a test file: a server started before its tests and closed after them, and
 * an HTTP client for it. The returned object is filled in beforeAll, so read it inside tests.
 */
export function useTestServer(envOverrides: Record<string, string> = {}): { server: RunningServer & { cfg: Config }; http: TestClient } {
  const ctx = {} as { server: RunningServer & { cfg: Config }; http: TestClient };
  beforeAll(async () => {
    ctx.server = await startTestServer(envOverrides);
    ctx.http = client(ctx.server.url);
  });
  afterAll(async () => ctx.server?.close());
  return ctx;
}
