// autocannon 9 ships no type declarations; this covers the part of its programmatic API we use.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    setupRequest?: (req: Request, context: Record<string, unknown>) => Request | null;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    requests?: Request[];
    /** Requests per second over all connections. */
    overallRate?: number;
  }
  interface Histogram {
    average: number;
    mean: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
  }
  interface Result {
    duration: number;
    requests: Histogram;
    latency: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
  }
  interface Instance extends EventEmitter {
    stop(): void;
  }
  function autocannon(opts: Options, cb?: (err: Error | null, result: Result) => void): Instance & Promise<Result>;
  export default autocannon;
  export type { Options, Request, Result, Instance };
}
