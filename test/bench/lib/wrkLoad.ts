/**
 * The same fixed list of requests as lib/load.ts sends with autocannon, sent with wrk (C, from
 * Debian's package `wrk`): each request once, in order, over `connections` connections of one
 * thread, until every one is answered. wrk needs a few per cent of a core where autocannon needs
 * a quarter or more, which on a 2-core machine shared with the server under test is CPU the
 * server does not get (docs/benchmarks.md).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LoadResult, LoadSpec } from './load';

/** Each connection asks for the next request when its answer is in; after the last one, for nothing. */
const SCRIPT = `
local ffi = require("ffi")
ffi.cdef[[ typedef struct { long tv_sec; long tv_nsec; } bench_timespec; int clock_gettime(int clock, bench_timespec *t); ]]
local ts = ffi.new("bench_timespec")
local function nowUs() ffi.C.clock_gettime(1, ts); return tonumber(ts.tv_sec) * 1e6 + tonumber(ts.tv_nsec) / 1e3 end
-- Globals: thread:get() in done() reads the thread's globals.
reqs, n, sent, answered, codes, verified, firstUs, lastUs = {}, 0, 0, 0, {}, false, 0, 0
function init(args)
  local f = assert(io.open(args[1], "rb")); local data = f:read("*a"); f:close()
  for r in data:gmatch("([^%z]+)%z") do reqs[#reqs + 1] = r end
  n = #reqs
end
function request()
  -- wrk calls this once after init to count the requests one call returns (its pipeline
  -- depth) and sends nothing of it: show it the first request without using it up.
  if not verified then verified = true; return reqs[1] end
  sent = sent + 1
  if sent == 1 then firstUs = nowUs() end
  if sent <= n then return reqs[sent] end
  return ""
end
function response(status, headers, body)
  answered = answered + 1
  codes[tostring(status)] = (codes[tostring(status)] or 0) + 1
  if answered == n then
    lastUs = nowUs()
    -- wrk's main thread sleeps for the whole -d duration: the runner interrupts it on this line.
    io.stderr:write("ALL ANSWERED\\n"); io.stderr:flush()
    wrk.thread:stop()
  end
end
local threads = {}
function setup(thread) threads[#threads + 1] = thread end
function done(summary, latency, requests)
  local t = threads[1]
  local parts = {}
  for k, v in pairs(t:get("codes")) do parts[#parts + 1] = string.format('"%s":%d', k, v) end
  local e = summary.errors
  io.write(string.format('RESULT {"answered":%d,"durationUs":%d,"codes":{%s},"p50":%d,"p95":%d,"p99":%d,"max":%d,"mean":%f,"timeouts":%d,"errors":%d}\\n',
    t:get("answered"), t:get("lastUs") - t:get("firstUs"), table.concat(parts, ","), latency:percentile(50), latency:percentile(95),
    latency:percentile(99), latency.max, latency.mean, e.timeout, e.connect + e.read + e.write))
end
`;

export function wrkInstalled(): boolean {
  return !spawnSync('wrk', ['--version']).error;
}

export function runWrk(spec: LoadSpec): Promise<LoadResult> {
  if (!spec.amount || spec.rate) throw new Error('runWrk sends a fixed list once (amount), without a rate');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-wrk-'));
  const url = new URL(spec.url);
  const raw = Array.from({ length: spec.amount }, (_, i) => {
    const r = spec.requests[i % spec.requests.length];
    const body = r.body ?? '';
    const headers = Object.entries({ ...r.headers, host: url.host, 'content-length': String(Buffer.byteLength(body)) })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    return `${r.method} ${r.path} HTTP/1.1\r\n${headers}\r\n${body}\u0000`;
  });
  fs.writeFileSync(path.join(dir, 'requests'), raw.join(''));
  fs.writeFileSync(path.join(dir, 'script.lua'), SCRIPT);
  return new Promise((resolve, reject) => {
    const child = spawn(
      'wrk',
      // The run ends when every request is answered; the duration only bounds a run in which some never are.
      [
        '-t1',
        `-c${spec.connections}`,
        `-d${Math.max(120, Math.ceil(spec.amount! / 20))}s`,
        '--timeout',
        '60s',
        '-s',
        path.join(dir, 'script.lua'),
        spec.url,
        '--',
        path.join(dir, 'requests'),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      if (stderr.includes('ALL ANSWERED')) child.kill('SIGINT');
    });
    child.on('error', (err) => reject(new Error(`wrk: ${err.message} (install Debian's package wrk)`)));
    child.on('close', () => {
      fs.rmSync(dir, { recursive: true, force: true });
      const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
      if (!line) return reject(new Error(`wrk printed no result: ${stdout} ${stderr}`));
      const r = JSON.parse(line.slice(7));
      const ok = Object.entries(r.codes as Record<string, number>)
        .filter(([c]) => c.startsWith('2'))
        .reduce((sum, [, k]) => sum + (k as number), 0);
      if (r.answered < spec.amount!)
        return reject(new Error(`wrk: ${r.answered} of ${spec.amount} requests answered (${r.errors} socket errors, ${r.timeouts} timeouts)`));
      const seconds = r.durationUs / 1e6;
      const ms = (us: number) => us / 1000;
      resolve({
        sent: r.answered,
        ok,
        non2xx: r.answered - ok,
        errors: r.errors,
        timeouts: r.timeouts,
        seconds,
        okPerSec: ok / seconds,
        latencyMs: { mean: ms(r.mean), p50: ms(r.p50), p95: ms(r.p95), p99: ms(r.p99), max: ms(r.max) },
        statusCodes: r.codes,
      });
    });
  });
}
