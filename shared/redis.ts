import { Redis, type RedisOptions } from 'ioredis';
import { config } from './config';

/**
 * Two kinds of connection:
 * - 'producer' (API): enableOfflineQueue false, so when Redis is down a request fails at once
 *   (the API answers 503) instead of hanging until a timeout.
 * - 'worker': maxRetriesPerRequest null, as BullMQ workers require for blocking commands.
 */
export function createRedis(kind: 'producer' | 'worker', url = config().redisUrl, extra: RedisOptions = {}): Redis {
  const opts: RedisOptions =
    kind === 'producer'
      ? { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, lazyConnect: false }
      : { maxRetriesPerRequest: null, enableReadyCheck: false };
  const client = new Redis(url, { ...opts, ...extra });
  // ioredis emits 'error' on every failed reconnect; an unhandled 'error' would crash the process.
  client.on('error', () => undefined);
  client.once('ready', () => everReady.add(client));
  return client;
}

const everReady = new WeakSet<Redis>();

let shared: Redis | null = null;
export function producerRedis(): Redis {
  shared ??= createRedis('producer');
  return shared;
}

let limiter: Redis | null = null;
/**
 * The API's rate-limit counters: a producer connection of its own with auto-pipelining, so the
 * one script call every request makes is sent together with the calls of the other requests in
 * the same event-loop turn (one socket write instead of one each; docs/benchmarks.md). BullMQ
 * keeps the plain producer connection: auto-pipelining under BullMQ has reports of lost job data.
 */
export function limiterRedis(): Redis {
  limiter ??= createRedis('producer', undefined, { enableAutoPipelining: true });
  return limiter;
}

/** Close the producer and rate-limiter connections (API shutdown, tests). */
export async function closeProducerRedis(): Promise<void> {
  const open = [shared, limiter].filter((c): c is Redis => c !== null);
  shared = null;
  limiter = null;
  await Promise.all(open.map((c) => c.quit().catch(() => c.disconnect())));
}

/**
 * Wait (bounded) until a connection is ready. Producers disable the offline queue so an outage
 * fails fast, which also means commands fail while the first connect is still in progress.
 */
export async function redisReady(client: Redis, timeoutMs = 1500): Promise<boolean> {
  if (client.status === 'ready') return true;
  // Waiting only makes sense for the first connect; a lost connection answers "no" at once, so an
  // outage costs requests nothing but the 503 (or the outbox row left for the relay).
  if (client.status === 'end' || everReady.has(client)) return false;
  return new Promise<boolean>((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    timer.unref();
    client.on('ready', onReady);
  });
}
