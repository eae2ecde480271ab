import http from 'node:http';
import net from 'node:net';
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { createTeam } from '../helpers/factories';
import { exitOf, spawnEntry, waitForOutput } from '../helpers/processes';
import { db } from '../../shared/db';
import { enqueue, getQueue, QUEUES } from '../../shared/queues';
import { waitUntil } from './faults';
import { draftPdfToRender, holdArtifactKey, startWorkerProcess, waitForBlockedDocumentInsert } from './workerKill';

/**
 * SIGTERM as a platform sends it, to processes started as the Procfile starts them. The API under
 * keep-alive load exits 0 without cutting a request it accepted; the worker finishes its job first.
 */
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGKILL');
      await exitOf(c);
    }
  }
});

async function startApi() {
  const api = spawnEntry('api/server.ts', { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' });
  children.push(api);
  await waitForOutput(api, /API listening/);
  const line = api
    .output()
    .split('\n')
    .find((l) => l.includes('API listening'))!;
  return { api, port: JSON.parse(line).port as number };
}

/** What one request came to: a whole answer, or a connection error before any answer — or a cut. */
type Outcome =
  | { kind: 'answered'; status: number; connection: string | undefined; body: string; reusedSocket: boolean; sentAfterSigterm: boolean; name?: string }
  | { kind: 'refused'; code: string; reusedSocket: boolean; sentAfterSigterm: boolean; name?: string }
  | { kind: 'cut'; detail: string; name?: string };

function send(port: number, agent: http.Agent, method: string, path: string, token: string, body: object | undefined, afterSigterm: () => boolean) {
  return new Promise<Outcome>((resolve) => {
    const sentAfterSigterm = afterSigterm();
    const payload = body ? JSON.stringify(body) : undefined;
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: { authorization: `Bearer ${token}`, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', () => undefined);
        res.on('close', () => {
          const text = Buffer.concat(chunks).toString();
          // A half answer: the body ended before its length, or the connection dropped mid-body.
          if (!res.complete) return resolve({ kind: 'cut', detail: `${res.statusCode} incomplete after ${text.length} bytes` });
          resolve({
            kind: 'answered',
            status: res.statusCode!,
            connection: res.headers.connection,
            body: text,
            reusedSocket: req.reusedSocket,
            sentAfterSigterm,
          });
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ kind: 'refused', code: err.code ?? err.message, reusedSocket: req.reusedSocket, sentAfterSigterm }),
    );
    req.setTimeout(60_000, () => req.destroy(Object.assign(new Error('no answer within 60 s'), { code: 'TIMEOUT' })));
    req.end(payload);
  });
}

/** A raw HTTP/1.1 connection the test writes byte by byte; `closed` resolves with all it read. */
async function rawConnection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  let text = '';
  let error: string | undefined;
  socket.on('data', (d) => (text += d.toString('latin1')));
  socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
  const closed = new Promise<{ text: string; error?: string }>((resolve) => socket.on('close', () => resolve({ text, error })));
  return { socket, text: () => text, closed };
}

/** Parse the responses in what a raw socket read; each must be whole (Content-Length bytes of body). */
function parseResponses(text: string) {
  const out: { status: number; headers: Record<string, string>; body: string }[] = [];
  let rest = text;
  while (rest.length) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`half a response head: ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length']);
    const body = rest.slice(end + 4, end + 4 + length);
    if (!Number.isFinite(length) || body.length !== length) throw new Error(`half a response body: ${statusLine} ${body.length}/${headers['content-length']}`);
    out.push({ status: Number(statusLine.split(' ')[1]), headers, body });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

const requestHead = (path: string, token: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nConnection: keep-alive\r\n`;

describe('SIGTERM to the API under keep-alive load (node scripts/serve.mjs web)', () => {
  it('exits 0; every answer is whole and no 5xx; refused requests got a connection error and were not stored; late requests on kept-alive sockets get Connection: close or a closed socket', async () => {
    const { admin } = await createTeam();
    const { api, port } = await startApi();
    let sigtermAt = 0;
    const afterSigterm = () => sigtermAt > 0;

    // Probe 2: a kept-alive connection that is idle at SIGTERM, used again after the shutdown line.
    const idle = await rawConnection(port);
    idle.socket.write(`${requestHead('/health', admin.token)}\r\n`);
    await waitUntil(
      async () => {
        try {
          return parseResponses(idle.text()).length === 1;
        } catch {
          return false;
        }
      },
      'the first answer on the idle probe',
      30_000,
      20,
    );

    // Keep-alive load: 4 clients, one socket each, reads and writes in a loop until their
    // connection is refused (bounded: 3000 requests or 90 s per client).
    const outcomes: Outcome[] = [];
    let seq = 0;
    const client = async (n: number) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const until = Date.now() + 90_000;
      try {
        for (let i = 0; i < 3000 && Date.now() < until; i++) {
          const name = `Keepalive ${n}-${seq++}`;
          const o =
            i % 2
              ? await send(port, agent, 'GET', '/api/customers', admin.token, undefined, afterSigterm)
              : await send(port, agent, 'POST', '/api/customers', admin.token, { name }, afterSigterm);
          if (i % 2 === 0) o.name = name;
          outcomes.push(o);
          if (o.kind !== 'answered') break;
        }
      } finally {
        agent.destroy();
      }
    };
    const clients = [0, 1, 2, 3].map(client);
    await waitUntil(async () => outcomes.length >= 80, 'the keep-alive load to be under way', 60_000, 50);
    // Probe 1: a request whose head is half sent when SIGTERM arrives (the connection is busy, not
    // idle); its rest is sent after the shutdown line → a whole answer with Connection: close.
    const busy = await rawConnection(port);
    busy.socket.write(requestHead('/api/customers', admin.token));
    // Sent before a few more rounds of the load were answered: the API has read the half head.
    const seen = outcomes.length;
    await waitUntil(async () => outcomes.length >= seen + 12, 'more load answered after the half head', 60_000, 20);

    sigtermAt = Date.now();
    api.kill('SIGTERM');
    await waitForOutput(api, /API shutting down/);
    busy.socket.write('\r\n');
    idle.socket.write(`${requestHead('/health', admin.token)}\r\n`);
    const exit = await exitOf(api);
    await Promise.all(clients);

    expect(exit).toEqual({ code: 0, signal: null });
    expect(api.output()).not.toMatch(/shutdown deadline/);

    // The load: whole answers, no 5xx, and every connection error is one before any answer.
    const cut = outcomes.filter((o) => o.kind === 'cut');
    expect(cut).toEqual([]);
    const answered = outcomes.filter((o) => o.kind === 'answered');
    expect(answered.filter((o) => o.status >= 500)).toEqual([]);
    for (const o of answered) {
      expect([200, 201]).toContain(o.status);
      expect(() => JSON.parse(o.body)).not.toThrow();
    }
    // Answers after SIGTERM exist (the clients were mid-loop) and the clients ended on refusals.
    expect(answered.length).toBeGreaterThan(80);
    const refused = outcomes.filter((o) => o.kind === 'refused');
    expect(refused.length).toBeGreaterThan(0);
    for (const o of refused) expect(['ECONNREFUSED', 'ECONNRESET', 'EPIPE']).toContain(o.code);
    // A refused write was never stored: nothing the API accepted was cut.
    const refusedNames = refused.map((o) => o.name).filter((n): n is string => !!n);
    if (refusedNames.length) expect(await db()('customers').whereIn('name', refusedNames).select('name')).toEqual([]);
    // Every answered write is stored.
    const answeredNames = answered.filter((o) => o.name && o.status === 201).map((o) => o.name!);
    expect(Number((await db()('customers').whereIn('name', answeredNames).count({ n: '*' }))[0].n)).toBe(answeredNames.length);
    // A kept-alive socket carries no request after its Connection: close answer.
    const closeAnswers = answered.filter((o) => o.connection === 'close');
    expect(closeAnswers.length).toBeGreaterThan(0);

    // Probe 1: the in-flight request got its whole answer, with Connection: close, and the socket closed.
    const busyResult = await busy.closed;
    const [busyAnswer, ...busyExtra] = parseResponses(busyResult.text);
    expect(busyExtra).toEqual([]);
    expect(busyAnswer.status).toBe(200);
    expect(busyAnswer.headers.connection).toBe('close');
    expect(Array.isArray(JSON.parse(busyAnswer.body))).toBe(true);

    // Probe 2: the first answer (before SIGTERM) whole; the request sent after the shutdown line
    // either got a whole answer with Connection: close or met a closed connection, nothing in between.
    const idleResult = await idle.closed;
    const idleAnswers = parseResponses(idleResult.text);
    expect(idleAnswers[0].status).toBe(200);
    expect(idleAnswers.length).toBeLessThanOrEqual(2);
    if (idleAnswers.length === 2) expect(idleAnswers[1]).toMatchObject({ status: 200, headers: { connection: 'close' } });
  }, 180_000);
});

describe('SIGTERM to a worker mid-job (node scripts/serve.mjs worker)', () => {
  it('the worker finishes the active render job, stores its document, and exits 0', async () => {
    const { draft, key, jobId } = await draftPdfToRender();

    const held = await holdArtifactKey(key);
    let worker: ChildProcess & { output: () => string };
    try {
      await enqueue(QUEUES.documents, 'render-invoice-document', key, { jobId });
      worker = await startWorkerProcess({ LOG_LEVEL: 'info' });
      children.push(worker);
      // The job is mid-flight: rendered, its INSERT waiting on the key the test holds.
      await waitForBlockedDocumentInsert();
      worker.kill('SIGTERM');
      await waitForOutput(worker, /finishing active jobs/);
      // The worker is waiting for its job, not gone.
      expect(worker.exitCode).toBeNull();
      expect(await getQueue(QUEUES.documents).getJobState(jobId)).toBe('active');
    } finally {
      await held.rollback();
    }
    expect(await exitOf(worker!)).toEqual({ code: 0, signal: null });
    expect(await getQueue(QUEUES.documents).getJobState(jobId)).toBe('completed');
    const rows = await db()('documents').where({ invoiceId: draft.id, kind: 'pdf', version: key.version }).select('content');
    expect(rows).toHaveLength(1);
    expect(rows[0].content.subarray(0, 5).toString()).toBe('%PDF-');
    expect(worker!.output()).not.toMatch(/shutdown deadline/);
  }, 120_000);
});
