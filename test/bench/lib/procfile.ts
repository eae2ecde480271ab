/**
 * The service as the Procfile deploys it, for the deployed-shape benchmarks: `release` run once,
 * then `web` and `worker` as separate processes started from the Procfile's own command lines,
 * with production settings; and the bare baselines (lib/bareProcess.ts) as processes of their
 * own. Each process's output goes to a log file (the web's info-level access log included), as a
 * platform collects a process's stdout.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { BareSpec } from './bareProcess';
import { queueAt } from './workerProcess';

const ROOT = path.resolve(import.meta.dirname, '../../..');

export interface RunningProcess {
  name: string;
  pid: number;
  /** Base URL of an HTTP process. */
  url?: string;
  log: string;
  stop: () => Promise<void>;
}

/** The Procfile's process types and their command lines. */
export function procfile(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of fs.readFileSync(path.join(ROOT, 'Procfile'), 'utf8').split('\n')) {
    const m = /^([A-Za-z0-9_-]+):\s*(.+)$/.exec(line.trim());
    if (m) out[m[1]] = m[2];
  }
  return out;
}

/**
 * What production requires (shared/config.ts, docs/production.md): NODE_ENV=production with real
 * secrets and METRICS_TOKEN, info-level logs. Generated per run; the benchmark process gets the
 * same JWT secret so the tokens its factories sign are valid for the web process.
 */
export function productionSecrets(): Record<string, string> {
  return {
    JWT_ACCESS_SECRET: crypto.randomBytes(48).toString('base64'),
    ENCRYPTION_KEY: crypto.randomBytes(32).toString('hex'),
    METRICS_TOKEN: crypto.randomBytes(24).toString('hex'),
  };
}

export function productionEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'info', HOST: '127.0.0.1', ...extra };
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** `sh -c "exec <command>"`: the Procfile's line as a platform runs it, the pid being node's own. */
function spawnProcfile(type: string, env: NodeJS.ProcessEnv, logDir: string): { child: ChildProcess; log: string } {
  const command = procfile()[type];
  if (!command) throw new Error(`Procfile has no "${type}" process type`);
  const log = path.join(logDir, `${type}.log`);
  const fd = fs.openSync(log, 'a');
  // `node` as the Procfile says, resolved to the node running the benchmark.
  const child = spawn('sh', ['-c', `exec ${command}`], {
    cwd: ROOT,
    env: { ...env, PATH: `${path.dirname(process.execPath)}:${env.PATH ?? ''}` },
    stdio: ['ignore', fd, fd],
  });
  fs.closeSync(fd);
  return { child, log };
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const kill = setTimeout(() => child.kill('SIGKILL'), 40_000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    });
}

/** The release step (migrations) on the fresh bench database; throws with its log on failure. */
export async function runRelease(env: NodeJS.ProcessEnv, logDir: string): Promise<void> {
  const { child, log } = spawnProcfile('release', env, logDir);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  if (code !== 0) throw new Error(`release exited with ${code}: ${fs.readFileSync(log, 'utf8').slice(-2000)}`);
}

async function waitFor(what: string, child: ChildProcess, log: string, ready: () => Promise<boolean>): Promise<void> {
  // 2 minutes: on a busy machine loading the modules took over 30 s (lib/workerProcess.ts).
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}: ${fs.readFileSync(log, 'utf8').slice(-2000)}`);
    if (await ready().catch(() => false)) return;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${what} did not become ready within 2 minutes`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Procfile `web`, on a free loopback port; ready when GET /ready answers 200. */
export async function startWeb(env: NodeJS.ProcessEnv, logDir: string): Promise<RunningProcess> {
  const port = await freePort();
  const { child, log } = spawnProcfile('web', { ...env, PORT: String(port) }, logDir);
  const url = `http://127.0.0.1:${port}`;
  await waitFor('web', child, log, async () => (await fetch(`${url}/ready`)).status === 200);
  return { name: 'web', pid: child.pid!, url, log, stop: stopper(child) };
}

/** Procfile `worker`; ready when BullMQ lists a worker on the webhooks queue under REDIS_PREFIX. */
export async function startWorker(env: NodeJS.ProcessEnv, logDir: string): Promise<RunningProcess> {
  const { child, log } = spawnProcfile('worker', env, logDir);
  const q = queueAt('webhooks', env.REDIS_PREFIX!);
  try {
    await waitFor('worker', child, log, async () => (await q.queue.getWorkers()).length > 0);
  } finally {
    await q.close();
  }
  return { name: 'worker', pid: child.pid!, log, stop: stopper(child) };
}

/** A bare baseline (lib/bareProcess.ts) in a process of its own, with the run's plain environment. */
export async function startBareProcess(spec: BareSpec, logDir: string): Promise<RunningProcess> {
  const log = path.join(logDir, `bare-${spec.mode}.log`);
  const fd = fs.openSync(log, 'a');
  const child = fork(path.join(import.meta.dirname, 'bareProcess.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, NODE_ENV: 'production', BENCH_BARE: JSON.stringify(spec) },
    stdio: ['ignore', fd, fd, 'ipc'],
  });
  fs.closeSync(fd);
  const msg = await new Promise<{ url?: string; ready?: boolean }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`bare ${spec.mode} did not start within 2 minutes`));
    }, 120_000);
    child.once('message', (m) => {
      clearTimeout(timer);
      resolve(m as { url?: string });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`bare ${spec.mode} exited with ${code}: ${fs.readFileSync(log, 'utf8').slice(-2000)}`));
    });
  });
  child.removeAllListeners('exit');
  child.disconnect();
  return { name: `bare ${spec.mode}`, pid: child.pid!, url: msg.url, log, stop: stopper(child) };
}
