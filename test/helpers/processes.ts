import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const repoRoot = path.resolve(import.meta.dirname, '../..');

/**
 * Run one of our entry points (api/server.ts, workers/index.ts) as a real child process;
 * `detached`: in a session of its own, as a service manager starts it (its own autogroup too).
 */
export function spawnEntry(
  script: string,
  env: Record<string, string | undefined> = {},
  opts: { detached?: boolean } = {},
): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, script)], {
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
  // Generous: on a loaded 2-core CI machine a fresh tsx process can take tens of seconds to boot.
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (pattern.test(child.output())) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${pattern}; output so far:\n${child.output()}`);
}
