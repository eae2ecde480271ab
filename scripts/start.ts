/**
 * `npm start`: the whole service on one machine — API + worker, migrations applied.
 * Uses DATABASE_URL / REDIS_URL when set; otherwise starts an embedded PostgreSQL (data in
 * ./.data/postgres, kept between runs) and a private redis-server (see scripts/services.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startEmbeddedPostgres, startPrivateRedis, ensureDatabase, type Service } from './services';

const root = path.resolve(import.meta.dirname, '..');
const dataDir = path.join(root, '.data');
const services: Service[] = [];
const children: ChildProcess[] = [];

async function main() {
  const env = { ...process.env };
  if (!env.DATABASE_URL) {
    console.log('DATABASE_URL not set: starting embedded PostgreSQL (data in .data/postgres)');
    const pgSvc = await startEmbeddedPostgres(path.join(dataDir, 'postgres'));
    services.push(pgSvc);
    env.DATABASE_URL = await ensureDatabase(pgSvc.url, 'accounting');
  }
  if (!env.REDIS_URL) {
    console.log('REDIS_URL not set: starting a private redis-server (no persistence)');
    const redis = await startPrivateRedis();
    services.push(redis);
    env.REDIS_URL = redis.url;
  }
  if (!env.BULL_BOARD_USER && !env.BULL_BOARD_PASSWORD) {
    // Local convenience: an operator password generated once and kept in .data (never printed).
    fs.mkdirSync(dataDir, { recursive: true });
    const file = path.join(dataDir, 'bull-board-password');
    if (!fs.existsSync(file)) fs.writeFileSync(file, randomBytes(12).toString('base64url'), { mode: 0o600 });
    env.BULL_BOARD_USER = 'operator';
    env.BULL_BOARD_PASSWORD = fs.readFileSync(file, 'utf8').trim();
    console.log('Bull Board: /admin/queues, user "operator", password in .data/bull-board-password');
  }

  // As the Procfile runs them: the release step through tsx, web and worker bundled (scripts/serve.mjs).
  const run = (...args: string[]) => spawn(process.execPath, args, { env, stdio: 'inherit', cwd: root });

  const migrate = run('--import', 'tsx', path.join(root, 'scripts/migrate.ts'));
  const code: number = await new Promise((r) => migrate.on('exit', (c) => r(c ?? 1)));
  if (code !== 0) return stop(code);

  for (const script of ['web', 'worker']) {
    const child = run(path.join(root, 'scripts/serve.mjs'), script);
    children.push(child);
    child.on('exit', (c) => {
      if (!stopping) {
        console.error(`${script} exited with code ${c}; stopping the service`);
        void stop(c ?? 1);
      }
    });
  }
  console.log(`Service starting on http://localhost:${env.PORT ?? 3000} (Ctrl-C to stop)`);
}

let stopping = false;
async function stop(code: number) {
  if (stopping) return;
  stopping = true;
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null) return resolve();
          c.once('exit', () => resolve());
          c.kill('SIGTERM');
        }),
    ),
  );
  for (const s of services.reverse()) await s.stop();
  process.exit(code);
}

process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
main().catch(async (err) => {
  console.error((err as Error).message);
  await stop(1);
});
