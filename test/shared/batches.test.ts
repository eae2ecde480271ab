import { describe, expect, it } from 'vitest';
import { Batches } from '../../shared/batches';

/**
 * The batching rules shared by the webhook store and the webhook job (shared/batches.ts), with
 * plain functions standing in for the statement: which items go together, which result each
 * caller gets, and what happens when a batch throws.
 */
function recorder(opts: { maxSize: number; maxInFlight?: number; failBatchWith?: (items: number[]) => boolean; failOne?: (item: number) => boolean }) {
  const calls: Array<{ batch: number[] } | { one: number }> = [];
  const observed: Array<[string, number]> = [];
  let release: (() => void) | undefined;
  let hold: Promise<void> | undefined;
  let running = 0;
  let mostRunning = 0;
  const batches = new Batches<number, string>({
    maxSize: opts.maxSize,
    maxInFlight: opts.maxInFlight,
    runBatch: async (items) => {
      calls.push({ batch: items });
      mostRunning = Math.max(mostRunning, ++running);
      try {
        await hold;
      } finally {
        running--;
      }
      if (opts.failBatchWith?.(items)) throw new Error('batch refused');
      return items.map((i) => `batch:${i}`);
    },
    runOne: async (item) => {
      calls.push({ one: item });
      if (opts.failOne?.(item)) throw new Error(`item ${item} refused`);
      return `one:${item}`;
    },
    observe: (outcome, size) => observed.push([outcome, size]),
  });
  return {
    batches,
    calls,
    observed,
    mostRunning: () => mostRunning,
    /** The next batch waits until released, so items handed over meanwhile queue behind it. */
    holdNext: () => {
      hold = new Promise((r) => (release = r));
    },
    release: () => {
      hold = undefined;
      release?.();
    },
  };
}

const settle = (p: Promise<string>) =>
  p.then(
    (ok) => ({ ok }),
    (err: Error) => ({ err: err.message }),
  );

describe('Batches', () => {
  it('items handed over in one turn form one batch; each caller gets its own result, in order', async () => {
    const r = recorder({ maxSize: 10 });
    const results = await Promise.all([1, 2, 3].map((i) => r.batches.run(i)));
    expect(results).toEqual(['batch:1', 'batch:2', 'batch:3']);
    expect(r.calls).toEqual([{ batch: [1, 2, 3] }]);
    expect(r.observed).toEqual([['committed', 3]]);
  });

  it('a lone item runs alone at once; items arriving while a batch runs form the next, at most maxSize each', async () => {
    const r = recorder({ maxSize: 3 });
    r.holdNext();
    const first = [r.batches.run(1), r.batches.run(2)];
    await new Promise((resolve) => setImmediate(resolve));
    const later = [3, 4, 5, 6, 7].map((i) => r.batches.run(i));
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.batches.waitingCount).toBe(5);
    r.release();
    expect(await Promise.all([...first, ...later])).toEqual([1, 2, 3, 4, 5, 6, 7].map((i) => `batch:${i}`));
    expect(r.calls).toEqual([{ batch: [1, 2] }, { batch: [3, 4, 5] }, { batch: [6, 7] }]);
    expect(r.batches.waitingCount).toBe(0);

    const alone = recorder({ maxSize: 3 });
    expect(await alone.batches.run(9)).toBe('one:9');
    expect(alone.calls).toEqual([{ one: 9 }]);
    expect(alone.observed).toEqual([]);
  });

  it('maxInFlight 2: items arriving while a batch runs start a second batch at once; a third waits for one of them', async () => {
    const r = recorder({ maxSize: 3, maxInFlight: 2 });
    r.holdNext();
    const first = [1, 2, 3].map((i) => r.batches.run(i));
    await new Promise((resolve) => setImmediate(resolve));
    const second = [4, 5].map((i) => r.batches.run(i));
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.calls).toEqual([{ batch: [1, 2, 3] }, { batch: [4, 5] }]);
    const third = [6, 7, 8, 9].map((i) => r.batches.run(i));
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.batches.waitingCount).toBe(4);
    r.release();
    expect(await Promise.all([...first, ...second, ...third])).toEqual([...[1, 2, 3, 4, 5, 6, 7, 8].map((i) => `batch:${i}`), 'one:9']);
    // Both loops go on when released: the first takes the next full batch, the second the rest.
    expect(r.calls.slice(2)).toEqual([{ batch: [6, 7, 8] }, { one: 9 }]);
    expect(r.mostRunning()).toBe(2);
  });

  it('maxInFlight 2: items handed over in one turn still form one batch, and no empty batch runs', async () => {
    const r = recorder({ maxSize: 10, maxInFlight: 2 });
    expect(await Promise.all([1, 2, 3].map((i) => r.batches.run(i)))).toEqual(['batch:1', 'batch:2', 'batch:3']);
    // The second loop (started by item 2) looks a turn later and finds nothing.
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.calls).toEqual([{ batch: [1, 2, 3] }]);
  });

  it('a batch that throws: each of its items runs alone, and only the bad one fails', async () => {
    const r = recorder({ maxSize: 10, failBatchWith: (items) => items.includes(2), failOne: (i) => i === 2 });
    const results = await Promise.all([1, 2, 3].map((i) => settle(r.batches.run(i))));
    expect(results).toEqual([{ ok: 'one:1' }, { err: 'item 2 refused' }, { ok: 'one:3' }]);
    expect(r.calls).toEqual([{ batch: [1, 2, 3] }, { one: 1 }, { one: 2 }, { one: 3 }]);
    expect(r.observed).toEqual([['rolled_back', 3]]);
  });

  it('maxSize 1 turns batches off: every item runs alone, side by side', async () => {
    const r = recorder({ maxSize: 1 });
    expect(await Promise.all([1, 2].map((i) => r.batches.run(i)))).toEqual(['one:1', 'one:2']);
    expect(r.calls).toEqual([{ one: 1 }, { one: 2 }]);
  });

  it('without runOne a failed batch fails every item with its error, and a lone item is a batch of one', async () => {
    const batches: Array<number[]> = [];
    const b = new Batches<number, string>({
      maxSize: 10,
      runBatch: async (items) => {
        batches.push(items);
        if (items.includes(2)) throw new Error('Redis did not answer');
        return items.map((i) => `batch:${i}`);
      },
    });
    expect(await Promise.all([1, 2, 3].map((i) => settle(b.run(i))))).toEqual(Array(3).fill({ err: 'Redis did not answer' }));
    expect(await b.run(4)).toBe('batch:4');
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });
});
