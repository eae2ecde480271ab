/**
 * `npm test`: a fresh database per run, migrated, then vitest against real PostgreSQL and Redis.
 * - DATABASE_URL set (CI): used as the admin connection to create and later drop the test DB.
 * - otherwise an embedded PostgreSQL is started (its own data dir per run, removed afterwards).
 * - REDIS_URL set: used with a unique key prefix for this run; otherwise a private redis-server.
 * Extra arguments are passed to vitest (e.g. `npm test -- test/api/foundation.test.ts`).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { startEmbeddedPostgres, startPrivateRedis, ensureDatabase, dropDatabase, type Service } from './services';
import { migrateLatest } from '../shared/db';
import { Redis } from 'ioredis';

const root = path.resolve(import.meta.dirname, '..');
const services: Service[] = [];

async function main(): Promise<number> {
  const runId = `${Date.now().toString(36)}_${process.pid}`;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    // A data directory per run: several test runs on one machine never share a server.
    const dataDir = path.join(root, '.data', `test-postgres-${runId}`);
    const pgSvc = await startEmbeddedPostgres(dataDir, { quiet: true });
    services.push({
      url: pgSvc.url,
      stop: async () => {
        await pgSvc.stop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    });
    adminUrl = pgSvc.url;
  }
  let redisUrl = process.env.REDIS_URL;
  if (!redisUrl) {
    const redis = await startPrivateRedis();
    services.push(redis);
    redisUrl = redis.url;
  }
  const dbName = `acct_test_${runId}`;
  const responseLog = path.join(os.tmpdir(), `response-schema-${runId}.jsonl`);
  const databaseUrl = await ensureDatabase(adminUrl, dbName);
  try {
    await migrateLatest(databaseUrl);
    const env = {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: `test_${runId}`,
      TEST_ADMIN_DATABASE_URL: adminUrl,
      // Every JSON answer is checked against its documented schema (api/responseSchemas.ts).
      RESPONSE_SCHEMA_LOG: responseLog,
      // Worker processes the tests spawn run at full priority: beside parallel test files a niced
      // worker (the service's default, 10) would be starved of CPU and tests waiting on it time out.
      // The tests of WORKER_NICE itself set it.
      WORKER_NICE: process.env.WORKER_NICE ?? '0',
    };
    const vitest = spawn(process.execPath, [path.join(root, 'node_modules/vitest/vitest.mjs'), 'run', ...process.argv.slice(2)], {
      env,
      stdio: 'inherit',
      cwd: root,
    });
    const code = await new Promise<number>((resolve) => vitest.on('exit', (c) => resolve(c ?? 1)));
    return reportResponseMismatches(responseLog) ? 1 : code;
  } finally {
    fs.rmSync(responseLog, { force: true });
    await deleteKeys(redisUrl, `test_${runId}`).catch((err) => console.error(`could not clean Redis keys: ${err.message}`));
    await dropDatabase(adminUrl, dbName).catch((err) => console.error(`could not drop ${dbName}: ${err.message}`));
  }
}

main()
  .then(async (code) => {
    for (const s of services.reverse()) await s.stop();
    process.exit(code);
  })
  .catch(async (err) => {
    console.error(err);
    for (const s of services.reverse()) await s.stop();
    process.exit(1);
  });

/** Remove this run's Redis keys (queues, rate limiters), so a shared Redis keeps no leftovers. */
async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/**
 * Answers that did not match their documented schema during the run (api/responseSchemas.ts):
 * printed per route and status, and the run fails, so the OpenAPI document's `required` fields
 * stay true. Returns whether there were any.
 */
function reportResponseMismatches(file: string): boolean {
  if (!fs.existsSync(file)) return false;
  const byRoute = new Map<string, { count: number; errors: Set<string> }>();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const { route, status, errors } = JSON.parse(line) as { route: string; status: number; errors: string[] };
    const entry = byRoute.get(`${route} → ${status}`) ?? { count: 0, errors: new Set<string>() };
    entry.count++;
    for (const e of errors) entry.errors.add(e);
    byRoute.set(`${route} → ${status}`, entry);
  }
  if (!byRoute.size) return false;
  console.error(`\nAnswers that do not match their documented response schema (api/responseSchemas.ts):`);
  for (const [key, { count, errors }] of byRoute) console.error(`  ${key} (${count}×): ${[...errors].slice(0, 5).join('; ')}`);
  return true;
}
