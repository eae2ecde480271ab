import fs from 'node:fs';
import os from 'node:os';
import { afterAll, expect, it } from 'vitest';
import { exitOf, spawnEntry, waitForOutput } from '../helpers/processes';

/**
 * WORKER_NICE in a real worker process (workers/cpuPriority.ts). Linux shares the CPU between
 * autogroups (one per session) before nice values count, so a worker in a session of its own
 * lowers its group too; one that shares the session of the process that started it (a Procfile
 * runner, this test) must leave that group alone, or it would slow its siblings as well.
 */
const children: ReturnType<typeof spawnEntry>[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

const autogroupOf = (pid: number) => fs.readFileSync(`/proc/${pid}/autogroup`, 'utf8').trim();
const hasAutogroups = fs.existsSync('/proc/self/autogroup');

/** env.WORKER_NICE undefined: the variable is not set at all. */
async function startWorker(detached: boolean, env: { WORKER_NICE: string | undefined } = { WORKER_NICE: '7' }) {
  const child = spawnEntry('workers/index.ts', { REDIS_PREFIX: process.env.REDIS_PREFIX, ...env }, { detached });
  children.push(child);
  await waitForOutput(child, /workers started/);
  return child;
}

async function stop(child: ReturnType<typeof spawnEntry>) {
  child.kill('SIGTERM');
  expect(await exitOf(child)).toEqual({ code: 0, signal: null });
}

it.skipIf(!hasAutogroups)('a worker leading its own session lowers its process and its autogroup to WORKER_NICE', { timeout: 120_000 }, async () => {
  const child = await startWorker(true);
  expect(os.getPriority(child.pid!)).toBe(7);
  expect(autogroupOf(child.pid!)).toMatch(/ nice 7$/);
  expect(autogroupOf(child.pid!)).not.toBe(autogroupOf(process.pid));
  expect(child.output()).toMatch(/"nice":7,"autogroup":"\/autogroup-\d+ nice 7"/);
  await stop(child);
});

it.skipIf(!hasAutogroups)(
  'a worker sharing the session of its parent lowers only itself; the shared autogroup keeps its nice value',
  { timeout: 120_000 },
  async () => {
    const before = autogroupOf(process.pid);
    const child = await startWorker(false);
    expect(os.getPriority(child.pid!)).toBe(7);
    expect(autogroupOf(child.pid!)).toBe(before);
    expect(autogroupOf(process.pid)).toBe(before);
    await stop(child);
  },
);

it('a worker started without WORKER_NICE runs at the default, 10 (the test runner pins 0 for the other tests)', { timeout: 120_000 }, async () => {
  const child = await startWorker(false, { WORKER_NICE: undefined });
  expect(os.getPriority(child.pid!)).toBe(10);
  await stop(child);
});
