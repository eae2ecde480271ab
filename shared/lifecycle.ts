import { ConfigError } from './config';
import { closeDb } from './db';
import { closeQueues } from './queues';
import { closeProducerRedis } from './redis';
import { logger } from './logger';

/**
 * Process entry points (api/server.ts, workers/index.ts) share their start and stop rules:
 * a configuration error exits with one line and code 2; SIGTERM/SIGINT runs the process's own
 * stop step, then closes queues, Redis and the database, and exits 0 — or with the stop step's
 * exitCode (the API's when it had to cut connections), or 1 past the deadline, with a line saying so.
 */
export async function runEntryPoint<T>(start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
}

export function stopGracefullyOnSignals(opts: { message: string; deadlineMs: number; stop: () => Promise<{ exitCode: number } | undefined> }): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, opts.message);
    setTimeout(() => {
      logger.error({ signal, deadlineMs: opts.deadlineMs }, 'shutdown deadline passed: exiting with work unfinished');
      process.exit(1);
    }, opts.deadlineMs).unref();
    const result = await opts.stop();
    await closeQueues();
    await closeProducerRedis();
    await closeDb();
    process.exit(result?.exitCode ?? 0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
