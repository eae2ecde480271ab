import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import pino from 'pino';
import { isoTime, mergeLogContext } from '../../shared/logger';
import { turnBatchedDestination } from '../../shared/logDestination';

/**
 * The logger's cheaper parts write what pino's own did: the time field, the context merged in
 * front of a line's fields, and the lines themselves, in order, once per turn of the event loop.
 */
describe('log line parts', () => {
  it('isoTime is pino’s isoTime for any instant and any order of instants', () => {
    const instant = fc.oneof(fc.integer({ min: 0, max: 253402300799999 }), fc.constantFrom(0, 999, 1000, 1795803521000, 1795803521009, 1795803521999));
    fc.assert(
      fc.property(fc.array(instant, { minLength: 1, maxLength: 20 }), (ts) => {
        for (const t of ts) expect(isoTime(t)).toBe(`,"time":"${new Date(t).toISOString()}"`);
      }),
    );
    // pino's own function reads the clock: compare at the same instant.
    const now = Date.now();
    const original = Date.now;
    Date.now = () => now;
    try {
      expect(isoTime()).toBe(pino.stdTimeFunctions.isoTime());
    } finally {
      Date.now = original;
    }
  });

  it('the context comes first, a line’s field of the same name wins, and neither object changes', () => {
    const context = Object.freeze({ requestId: 'req-12345678' });
    const line = Object.freeze({ method: 'GET', status: 200 });
    const merged = mergeLogContext(line, context);
    expect(JSON.stringify(merged)).toBe('{"requestId":"req-12345678","method":"GET","status":200}');
    expect(JSON.stringify(mergeLogContext({ requestId: 'own', msgField: 1 }, context))).toBe('{"requestId":"own","msgField":1}');
    expect(context).toEqual({ requestId: 'req-12345678' });
    expect(line).toEqual({ method: 'GET', status: 200 });
  });

  it('lines are held until the turn ends, then written in order in one write', async () => {
    const writes: string[] = [];
    const dest = turnBatchedDestination({ write: (s: string) => writes.push(s) });
    dest.write('a\n');
    dest.write('b\n');
    expect(writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(['a\nb\n']);
    dest.write('c\n');
    dest.flushSync();
    expect(writes).toEqual(['a\nb\n', 'c\n']);
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(2);
  });

  it('a process that exits writes the lines it still holds', async () => {
    const { execFileSync } = await import('node:child_process');
    const out = execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        "import('./shared/logDestination.ts').then(({ turnBatchedDestination }) => { const d = turnBatchedDestination(process.stdout); d.write('held\\n'); process.exit(0); })",
      ],
      { encoding: 'utf8' },
    );
    expect(out).toBe('held\n');
  });
});
