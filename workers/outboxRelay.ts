import pg from 'pg';
import type { Config } from '../shared/config';
import { OUTBOX_CHANNEL, relayOutbox } from '../shared/outbox';
import { producerRedis, redisReady } from '../shared/redis';
import { logger } from '../shared/logger';

/**
 * A worker process's outbox relay: LISTENs on OUTBOX_CHANNEL and relays rows once a notifying
 * statement commits, one pass at a time and at most every PASS_SPACING_MS, so under load a pass
 * carries many deliveries' jobs. Relays once on every (re)connect and Redis ready; the relay-outbox
 * job is the backstop; SKIP LOCKED splits rows between processes (docs/operations.md, "Outbox relay").
 */
export interface OutboxRelay {
  close: () => Promise<void>;
}

const BATCH = 500;
/** 25 ms: at most 40 passes a second; a delivery waits 0–25 ms for its pass at moderate load. */
const PASS_SPACING_MS = 25;
const MAX_BACKOFF_MS = 30_000;

export function startOutboxRelay(cfg: Config): OutboxRelay {
  let client: pg.Client | null = null;
  let closed = false;
  let running: Promise<void> | null = null;
  /** A notification arrived that no pass has served yet. */
  let wanted = false;
  let lastPassAt = 0;
  let spacing: { timer: NodeJS.Timeout; wake: () => void } | undefined;
  let backoffMs = 500;
  let retryTimer: NodeJS.Timeout | undefined;
  const lost = new WeakSet<pg.Client>();

  const waitForSpacing = () => {
    const ms = lastPassAt + PASS_SPACING_MS - Date.now();
    if (ms <= 0) return undefined;
    return new Promise<void>((wake) => (spacing = { timer: setTimeout(wake, ms), wake }));
  };

  const passes = async () => {
    while (wanted && !closed) {
      await waitForSpacing();
      wanted = false;
      lastPassAt = Date.now();
      // With Redis down a pass could only lock rows and give up: skip it; Redis's 'ready' kicks.
      if (closed || !(await redisReady(producerRedis()))) return;
      try {
        while (!closed && (await relayOutbox({ limit: BATCH })) === BATCH);
      } catch (err) {
        logger.warn({ err: String(err) }, 'outbox relay pass failed; the next notification or the recurring relay retries');
        return;
      }
    }
  };

  const kick = () => {
    if (closed) return;
    wanted = true;
    running ??= passes().finally(() => {
      running = null;
    });
  };

  const scheduleReconnect = (c: pg.Client, err?: unknown) => {
    if (lost.has(c)) return;
    lost.add(c);
    if (client === c) client = null;
    c.end().catch(() => {});
    if (closed) return;
    logger.warn({ err: err ? String(err) : undefined, retryInMs: backoffMs }, 'outbox relay lost its database connection; reconnecting');
    retryTimer = setTimeout(connect, backoffMs);
    retryTimer.unref();
    backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
  };

  const onNotification = (msg: pg.Notification) => {
    if (msg.channel === OUTBOX_CHANNEL && msg.payload === cfg.redisPrefix) kick();
  };

  async function connect(): Promise<void> {
    if (closed) return;
    const c = new pg.Client({
      connectionString: cfg.databaseListenUrl,
      // Named with the deployment's prefix: pg_stat_activity shows whose relay a connection is.
      application_name: `accounting:outbox-relay:${cfg.redisPrefix}`.slice(0, 63),
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
    });
    c.on('notification', onNotification);
    c.on('error', (err) => scheduleReconnect(c, err));
    c.on('end', () => scheduleReconnect(c));
    try {
      await c.connect();
      await c.query(`listen ${OUTBOX_CHANNEL}`);
    } catch (err) {
      scheduleReconnect(c, err);
      return;
    }
    if (closed) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    backoffMs = 500;
    kick();
  }

  const onRedisReady = () => kick();
  producerRedis().on('ready', onRedisReady);
  void connect();

  return {
    close: async () => {
      closed = true;
      clearTimeout(retryTimer);
      if (spacing) {
        clearTimeout(spacing.timer);
        spacing.wake();
      }
      producerRedis().off('ready', onRedisReady);
      const c = client;
      client = null;
      if (c) {
        lost.add(c);
        await c.end().catch(() => {});
      }
      await running;
    },
  };
}
