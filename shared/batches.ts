import { currentLogContext, type LogContext, runWithLogContext, runWithoutLogContext } from './logContext';

/**
 * Work handed over one item at a time, done in batches of up to `maxSize` (a statement's, commit's
 * or round trip's fixed cost paid once), each caller settling with its own item's result. No
 * waiting to fill; up to `maxInFlight` batches at once. runBatch is all or nothing: if it throws,
 * each item runs alone through runOne (in its caller's log context), else all fail with the error.
 */
export interface BatchesOptions<T, R> {
  maxSize: number;
  /** Batches running at the same time; default 1. */
  maxInFlight?: number;
  /** Every item at once, all or nothing: one result per item, in the items' order. */
  runBatch: (items: T[]) => Promise<R[]>;
  /** One item on its own: a batch of one, and each item of a batch that threw. Default: runBatch([item]). */
  runOne?: (item: T) => Promise<R>;
  /** Told of every batch of two or more: committed, or rolled back (its items then run alone). */
  observe?: (outcome: 'committed' | 'rolled_back', size: number, err?: unknown) => void;
}

interface Waiting<T, R> {
  item: T;
  /** The caller's log context: the item's own lines, run alone, carry its request or job id. */
  logContext: LogContext | undefined;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export class Batches<T, R> {
  private readonly waiting: Waiting<T, R>[] = [];
  /** Drain loops running; each runs one batch at a time. */
  private draining = 0;

  constructor(private readonly opts: BatchesOptions<T, R>) {}

  /** Items handed over and not yet in a running batch. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  run(item: T): Promise<R> {
    // Batches off (maxSize 1): each item alone, side by side.
    if (this.opts.maxSize <= 1) return this.one(item);
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, logContext: currentLogContext(), resolve, reject });
      // The loop serves whoever hands items over next, not only this caller: without this its
      // batches' lines would carry this caller's request or job id.
      if (this.draining < (this.opts.maxInFlight ?? 1)) void runWithoutLogContext(() => this.drain());
    });
  }

  private async drain(): Promise<void> {
    this.draining++;
    try {
      while (this.waiting.length) {
        // Items handed over in this same turn join the batch.
        await new Promise((resolve) => setImmediate(resolve));
        // Another loop started in the same turn may have taken them all.
        const batch = this.waiting.splice(0, this.opts.maxSize);
        if (!batch.length) break;
        await this.runBatch(batch);
      }
    } finally {
      this.draining--;
    }
  }

  private async runBatch(batch: Waiting<T, R>[]): Promise<void> {
    if (batch.length === 1) return this.alone(batch[0]);
    let results: R[];
    try {
      results = await this.opts.runBatch(batch.map((w) => w.item));
    } catch (err) {
      this.opts.observe?.('rolled_back', batch.length, err);
      for (const w of batch) void (this.opts.runOne ? this.alone(w) : w.reject(err));
      return;
    }
    this.opts.observe?.('committed', batch.length);
    for (const [i, w] of batch.entries()) w.resolve(results[i]);
  }

  private alone(w: Waiting<T, R>): Promise<void> {
    const run = () => this.one(w.item).then(w.resolve, w.reject);
    return w.logContext ? runWithLogContext(w.logContext, run) : run();
  }

  private async one(item: T): Promise<R> {
    return this.opts.runOne ? this.opts.runOne(item) : (await this.opts.runBatch([item]))[0];
  }
}
