import { fork } from 'node:child_process';
import path from 'node:path';
import { Queue } from 'bullmq';
import { createRedis } from '../../../shared/redis';
import { jobOptionsFor, type QueueName } from '../../../shared/queues';
import { statOf, treeCpuSeconds } from './procStats';

export interface WorkerProcess {
  pid: number | undefined;
  /** CPU seconds the worker process itself has used so far, user and system, from /proc (Linux). */
  cpuSeconds: () => { user: number; system: number };
  /** The same for the worker and its child processes alive now (sandboxed renderers), summed. */
  treeCpuSeconds: () => number;
  close: () => Promise<void>;
}

/**
 * The worker as production runs it (Procfile: worker): its own process, `workers/index.ts`, with the
 * benchmark's environment plus `env`. Ready once BullMQ lists a worker on `readyQueue` under the
 * process's REDIS_PREFIX. BENCH_WORKER_PROF (a directory) makes it write a V8 CPU profile there;
 * BENCH_WORKER_SESSION=1 starts it in a session of its own (its own scheduling autogroup).
 */
export async function startWorkerProcess(opts: { readyQueue: QueueName; env?: Record<string, string> }): Promise<WorkerProcess> {
  const env = { ...process.env, ...opts.env };
  const child = fork(path.resolve(import.meta.dirname, '../../../workers/index.ts'), [], {
    execArgv: ['--import', 'tsx', ...(process.env.BENCH_WORKER_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_WORKER_PROF}`] : [])],
    env,
    stdio: 'inherit',
    detached: process.env.BENCH_WORKER_SESSION === '1',
  });
  const ready = queueAt(opts.readyQueue, env.REDIS_PREFIX!);
  try {
    // 2 minutes: on a busy machine (load average 40 on 2 cores) loading the worker's modules took over 30 s.
    const deadline = Date.now() + 120_000;
    while ((await ready.queue.getWorkers()).length === 0) {
      if (Date.now() > deadline || child.exitCode !== null) {
        // Not left behind: it would go on polling a benchmark database that is about to be dropped.
        child.kill('SIGKILL');
        throw new Error('the worker process did not start');
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await ready.close();
  }
  return {
    pid: child.pid,
    cpuSeconds: () => statOf(child.pid!),
    treeCpuSeconds: () => treeCpuSeconds(child.pid!),
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * A queue under any Redis prefix, on a connection of its own, with the service's job options for
 * that queue (shared/queues.ts getQueue serves only the process's own REDIS_PREFIX).
 */
export function queueAt(name: QueueName, prefix: string): { queue: Queue; close: () => Promise<void> } {
  const connection = createRedis('producer');
  const queue = new Queue(name, { connection, prefix, defaultJobOptions: jobOptionsFor(name) });
  return {
    queue,
    close: async () => {
      await queue.close();
      connection.disconnect();
    },
  };
}
