import { ChildPool, type Worker } from 'bullmq';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { config } from '../../shared/config';
import { startWorkers, type RunningWorkers } from '../../workers/worker';

/**
 * Issue 32: a worker with many sandboxed renderers warned "MaxListenersExceededWarning: 11 unpipe
 * listeners added to [Socket]". BullMQ forks each child with piped stdio and pipes its stdout and
 * stderr into this process's, which adds unpipe/error/close/finish listeners on our stdout and
 * stderr per child, for as long as the child lives (idle children stay in the pool). The workers
 * fork them with stdio 'inherit' (workers/worker.ts): no pipe, no listener, whatever the count.
 *
 * The children are retained from each Worker's own pool (what N concurrent jobs do), with a
 * trivial processor file so that forking many stays fast on a loaded machine.
 */
type Pool = { retain: (file: string) => Promise<unknown>; clean: () => Promise<void> };
const poolOf = (w: Worker) => (w as unknown as { childPool: Pool }).childPool;

let dir: string;
let processor: string;
let running: RunningWorkers | undefined;
const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-listeners-'));
  processor = path.join(dir, 'noop.mjs');
  fs.writeFileSync(processor, 'export default async () => "ok";\n');
  process.on('warning', onWarning);
});
afterAll(async () => {
  process.off('warning', onWarning);
  await running?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const listeners = () => ['unpipe', 'error', 'close', 'finish'].map((e) => process.stdout.listenerCount(e) + process.stderr.listenerCount(e));

it("BullMQ's default stdio adds listeners on our stdout/stderr per child (the cause)", async () => {
  // The file BullMQ's Worker forks (it resolves it next to its own classes).
  const mainFile = path.join(path.dirname(createRequire(import.meta.url).resolve('bullmq')), 'classes/main.js');
  const pool = new ChildPool({ mainFile, workerForkOptions: { execArgv: ['--import', 'tsx'] } }) as unknown as Pool;
  const before = listeners();
  try {
    await Promise.all([pool.retain(processor), pool.retain(processor)]);
    // One more of each on stdout and on stderr, per child.
    expect(listeners()).toEqual(before.map((n) => n + 4));
  } finally {
    await pool.clean();
  }
  expect(listeners()).toEqual(before);
});

it('12 sandboxed renderers of the started workers add no listener and raise no MaxListenersExceededWarning', async () => {
  const cfg = { ...config(), workerConcurrency: { ...config().workerConcurrency, documents: 8, email: 2, reports: 2 } };
  const before = listeners();
  running = await startWorkers({ queues: ['documents', 'email', 'reports'], cfg, schedule: false, relay: false });
  const counts: Record<string, number> = { documents: 8, email: 2, reports: 2 };
  await Promise.all(running.workers.flatMap((w) => Array.from({ length: counts[w.name] }, () => poolOf(w).retain(processor))));
  expect(listeners()).toEqual(before);
  await new Promise((r) => setImmediate(r));
  expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)).toEqual([]);
});
