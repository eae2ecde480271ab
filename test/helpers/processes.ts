import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const repoRoot = path.resolve(import.meta.dirname, '../..');

/** The web and worker entries start as the Procfile starts them: bundled by scripts/serve.mjs. */
const SERVED: Record<string, string> = { 'api/server.ts': 'web', 'workers/index.ts': 'worker' };

/**
 * Run one of our entry points (api/server.ts, workers/index.ts, scripts/migrate.ts) as a real
 * child process; `detached`: in a session of its own, as a service manager starts it (its own
 * autogroup too).
 */
export function spawnEntry(
  script: string,
  env: Record<string, string | undefined> = {},
  opts: { detached?: boolean } = {},
): ChildProcess & { output: () => string } {
  const args = SERVED[script] ? [path.join(repoRoot, 'scripts/serve.mjs'), SERVED[script]] : ['--import', 'tsx', path.join(repoRoot, script)];
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.detached ?? false,
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return Object.assign(child, { output: () => out });
}

export const exitOf = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode });
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });

export async function waitForOutput(child: { output: () => string }, pattern: RegExp, timeoutMs = 90_000): Promise<void> {
  // Generous: on a loaded 2-core CI machine a fresh process can take tens of seconds to boot.
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (pattern.test(child.output())) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${pattern}; output so far:\n${child.output()}`);
}
