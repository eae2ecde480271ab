/**
 * A throwaway environment for one benchmark run: its own database (created, migrated, dropped)
 * and its own Redis key prefix (deleted at the end), so a run leaves nothing behind and never
 * touches another run's or the tests' data.
 *
 * DATABASE_URL, when set, is used as the *admin* connection (the bench database is created next
 * to it); without it an embedded PostgreSQL is started under .data/bench-postgres, as `npm start`
 * would. REDIS_URL likewise, else a private redis-server.
 *
 * The service reads its configuration once (shared/config.ts), and pino reads the level when the
 * logger module loads, so prepareBenchEnv() must run before any service module is imported:
 * callers import those modules dynamically afterwards.
 */
import path from 'node:path';
import { Redis } from 'ioredis';
import { dropDatabase, ensureDatabase, startEmbeddedPostgres, startPrivateRedis, type Service } from '../../../scripts/services';

export interface BenchEnv {
  adminUrl: string;
  dbName: string;
  /** URL of the throwaway database. */
  url: string;
  redisUrl: string;
  redisPrefix: string;
  cleanup: () => Promise<void>;
}

/** Limits high enough that a benchmark measures the service, not the spec's per-IP limits. */
const UNLIMITED = '1000000000';

/** `migrate: false`: the caller migrates (the deployed shape runs the Procfile's release step). */
export async function prepareBenchEnv(opts: { migrate?: boolean } = {}): Promise<BenchEnv> {
  const services: Service[] = [];
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const svc = await startEmbeddedPostgres(path.resolve(import.meta.dirname, '../../../.data/bench-postgres'), { quiet: true });
    services.push(svc);
    adminUrl = svc.url;
  }
  let redisUrl = process.env.REDIS_URL;
  if (!redisUrl) {
    const svc = await startPrivateRedis();
    services.push(svc);
    redisUrl = svc.url;
  }
  const runId = `${Date.now().toString(36)}${process.pid.toString(36)}`;
  const dbName = `acct_bench_${runId}`;
  const url = await ensureDatabase(adminUrl, dbName);
  const redisPrefix = `acct-bench-${runId}`;

  Object.assign(process.env, {
    DATABASE_URL: url,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: redisPrefix,
    REQUIRE_HTTPS_WEBHOOKS: 'false',
    RATE_LIMIT_API_POINTS: UNLIMITED,
    RATE_LIMIT_WEBHOOKS_POINTS: UNLIMITED,
    RATE_LIMIT_LOGIN_POINTS: UNLIMITED,
    RATE_LIMIT_REGISTER_POINTS: UNLIMITED,
  });
  // Logging at info writes one line per request to this terminal; warn keeps the figures readable.
  process.env.LOG_LEVEL ??= 'warn';

  if (opts.migrate !== false) {
    const { migrateLatest } = await import('../../../shared/db');
    await migrateLatest(url);
  }

  let cleaned = false;
  return {
    adminUrl,
    dbName,
    url,
    redisUrl,
    redisPrefix,
    cleanup: async () => {
      if (cleaned) return;
      cleaned = true;
      const { closeDb } = await import('../../../shared/db');
      const { closeQueues } = await import('../../../shared/queues');
      const { closeProducerRedis } = await import('../../../shared/redis');
      await closeQueues().catch(() => {});
      await closeProducerRedis().catch(() => {});
      await closeDb().catch(() => {});
      await dropDatabase(adminUrl, dbName).catch((e) => console.error(`could not drop ${dbName}: ${e.message}`));
      await deleteRedisKeys(redisUrl, redisPrefix).catch((e) => console.error(`could not delete Redis keys ${redisPrefix}:*: ${e.message}`));
      for (const s of services.reverse()) await s.stop();
    },
  };
}

async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const r = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await r.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}
