/**
 * Fault injection for the resilience tests: servers a test owns and may stop and start again on
 * the same port (so processes configured with its URL reconnect without a restart), process-tree
 * SIGKILL, and bounded HTTP calls (a hang fails the test instead of blocking it).
 *
 * The servers are scripts/services.ts's own (embedded PostgreSQL, private redis-server); a restart
 * passes the port of the first start.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { startEmbeddedPostgres, startPrivateRedis, type Service } from '../../scripts/services';

import { waitUntil } from '../helpers/waitUntil';

export { waitUntil };

export interface RestartableServer {
  url: string;
  port: number;
  stop: () => Promise<void>;
  start: () => Promise<void>;
}

const tcpOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });

/** Wrap a service starter so the service can be stopped and started again on the same port. */
async function restartable(startOn: (port?: number) => Promise<Service>): Promise<RestartableServer> {
  let current = await startOn();
  const port = Number(new URL(current.url).port);
  let running = true;
  return {
    url: current.url,
    port,
    stop: async () => {
      if (!running) return;
      running = false;
      await current.stop();
      await waitUntil(async () => !(await tcpOpen(port)), `port ${port} closed`, 20_000, 50);
    },
    start: async () => {
      current = await startOn(port);
      running = true;
    },
  };
}

/** A private redis-server (no persistence) that can be stopped and started on the same port. */
export const restartableRedis = () => restartable((port) => startPrivateRedis({ port }));

/** An embedded PostgreSQL in its own data directory, restartable on the same port. */
export async function restartablePostgres(dataDir: string): Promise<RestartableServer & { remove: () => Promise<void> }> {
  const server = await restartable((port) => startEmbeddedPostgres(dataDir, { quiet: true, port }));
  return {
    ...server,
    remove: async () => {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      /* the process ended meanwhile */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) walk(c);
    out.push(p);
  };
  walk(pid);
  return out;
}

/**
 * SIGKILL a process and everything it started (BullMQ's sandbox children), as the OOM killer or
 * a container runtime would: no handler runs, no lock is released, sockets just drop.
 */
export async function sigkillTree(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (const pid of processTree(child.pid!)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  await exited;
}

export interface BoundedResponse {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * One HTTP call that must answer within boundMs (AbortSignal): an outage may make the API refuse,
 * never hang. JSON bodies are parsed; other bodies are returned as a Buffer.
 */
export async function bounded(
  baseUrl: string,
  method: string,
  urlPath: string,
  opts: { token?: string; body?: unknown; boundMs?: number; headers?: Record<string, string> } = {},
): Promise<BoundedResponse> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(baseUrl + urlPath, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: AbortSignal.timeout(opts.boundMs ?? 10_000),
  });
  const raw = Buffer.from(await res.arrayBuffer());
  const json = (res.headers.get('content-type') ?? '').includes('json');
  return { status: res.status, headers: res.headers, body: json && raw.length ? JSON.parse(raw.toString('utf8')) : raw };
}

/** The spec's error envelope, with error.status equal to the HTTP status. */
export function isEnvelope(res: { status: number; body: any }): boolean {
  const e = res.body?.error;
  return Boolean(e) && typeof e.message === 'string' && typeof e.code === 'string' && e.status === res.status;
}
