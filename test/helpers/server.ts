import { loadConfig, type Config } from '../../shared/config';
import { startServer, type RunningServer } from '../../api/server';

/** A real API server on a random port, optionally with configuration overrides (env names). */
export async function startTestServer(envOverrides: Record<string, string> = {}): Promise<RunningServer & { cfg: Config }> {
  const cfg = loadConfig({ ...process.env, ...envOverrides, HOST: '127.0.0.1' });
  const running = await startServer(cfg, 0);
  return { ...running, cfg };
}
