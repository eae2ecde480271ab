/** What pino needs of a destination, plus flushing what is held. */
export interface TurnBatchedDestination {
  write(line: string): boolean;
  /** Write whatever is held now (process exit, tests). */
  flushSync(): void;
}

/**
 * Log lines written once per turn of the event loop: each line is held until the turn's check
 * phase (setImmediate), then everything the turn logged goes out in one synchronous write, in
 * order. pino's default destination wrote each line asynchronously through the thread pool (a
 * write per line unless one was in flight); under load that hand-off cost the API about as much
 * as building the line (docs/benchmarks.md, "The request stack"). Synchronous, as Node's own
 * stdout is for files and pipes on Linux. What is held is written on process exit, so only a kill
 * (SIGKILL, abort) loses lines, those of the current turn, as the asynchronous writer lost the
 * ones queued behind its write in flight. `out` does the write (shared/logger.ts: pino's own
 * synchronous destination on stdout, which also stops logging on a closed pipe, EPIPE).
 */
export function turnBatchedDestination(out: { write(data: string): unknown }): TurnBatchedDestination {
  let held = '';
  let scheduled = false;
  const flushSync = () => {
    scheduled = false;
    if (!held) return;
    const chunk = held;
    held = '';
    out.write(chunk);
  };
  process.once('exit', flushSync);
  return {
    write(line: string) {
      held += line;
      if (!scheduled) {
        scheduled = true;
        setImmediate(flushSync);
      }
      return true;
    },
    flushSync,
  };
}
