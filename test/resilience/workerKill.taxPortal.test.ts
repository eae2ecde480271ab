import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { reloadConfig } from '../../shared/config';
import { db } from '../../shared/db';
import { getQueue, QUEUES } from '../../shared/queues';
import { exitOf } from '../helpers/processes';
import { startTestServer } from '../helpers/server';
import { client } from '../helpers/http';
import { startFakeFinanzOnline, type FakeFinanzOnline } from '../helpers/fakeFinanzOnline';
import { smallAustrianBook } from '../api/reports/books';
import { sigkillTree, waitUntil } from './faults';
import { startWorkerProcess } from './workerKill';

/**
 * A live U30 upload must never be filed twice (docs/reports.md). The worker is SIGKILLed after
 * FinanzOnline took the file but before its answer arrived — the window no idempotency key
 * closes. A proxy in front of the fake portal forwards the upload at once (the portal records it)
 * and withholds the answer until the kill. The new worker must not upload again.
 */
let fake: FakeFinanzOnline;
let proxy: Server;
let server: Awaited<ReturnType<typeof startTestServer>>;
const heldUploads: ServerResponse[] = [];
let holdUploads = false;
const started: ChildProcess[] = [];
const credentials = { tid: '123456789012', benid: 'WEBSRV01', pin: 'secret-pin', herstellerid: 'ATU12345678' };

beforeAll(async () => {
  fake = await startFakeFinanzOnline();
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const headers: Record<string, string> = {};
      for (const h of ['content-type', 'soapaction']) if (req.headers[h]) headers[h] = String(req.headers[h]);
      const upstream = await fetch(fake.url + req.url, { method: req.method, headers, body: Buffer.concat(chunks) });
      const body = Buffer.from(await upstream.arrayBuffer());
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/xml' });
        res.end(body);
      };
      if (holdUploads && req.url === '/fon/ws/fileupload') heldUploads.push(Object.assign(res, { answer }));
      else answer();
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const port = (proxy.address() as AddressInfo).port;
  process.env.FINANZONLINE_SESSION_URL = `http://127.0.0.1:${port}/fonws/ws/session`;
  process.env.FINANZONLINE_FILEUPLOAD_URL = `http://127.0.0.1:${port}/fon/ws/fileupload`;
  reloadConfig();
  server = await startTestServer();
});
afterEach(async () => {
  for (const c of started.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGTERM');
      await exitOf(c);
    }
  }
});
afterAll(async () => {
  await server?.close();
  proxy?.closeAllConnections();
  await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
  await fake?.close();
});

const worker = async () => {
  const w = await startWorkerProcess({
    FINANZONLINE_SESSION_URL: process.env.FINANZONLINE_SESSION_URL!,
    FINANZONLINE_FILEUPLOAD_URL: process.env.FINANZONLINE_FILEUPLOAD_URL!,
  });
  started.push(w);
  return w;
};

describe('worker SIGKILLed during a live FinanzOnline upload', () => {
  it('the portal took the file, the answer never arrived: the new worker does not upload again and flags "outcome unknown"', async () => {
    const team = await smallAustrianBook();
    const admin = client(server.url, { token: team.admin.token });
    expect((await admin.put('/api/settings', { portalCredentials: credentials })).status).toBe(200);
    const before = fake.uploads.length;

    holdUploads = true;
    const res = await admin.post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'live' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const id = res.body.submissionId as string;
    const jobId = `u30-${id}`;

    try {
      const first = await worker();
      await waitUntil(async () => heldUploads.length > 0, 'the upload to reach the portal', 30_000, 50);
      // The portal has filed it; the worker has marked it submitted and waits for the answer.
      expect(fake.uploads.slice(before).filter((u) => u.uebermittlung === 'P')).toHaveLength(1);
      expect((await db()('reportSubmissions').where({ id }).first()).status).toBe('submitted');
      await sigkillTree(first);
    } finally {
      holdUploads = false;
      for (const r of heldUploads.splice(0)) (r as ServerResponse & { answer: () => void }).answer();
    }

    await worker();
    const job = await waitUntil(
      async () => {
        // State first, then the job: a copy fetched before the state check could predate completion.
        const state = await getQueue(QUEUES.taxPortal).getJobState(jobId);
        return state === 'completed' ? getQueue(QUEUES.taxPortal).getJob(jobId) : null;
      },
      'the stalled submission job to complete on the new worker',
      40_000,
      200,
    );
    expect(job.returnvalue).toMatchObject({ status: 'submitted', outcomeUnknown: true });

    const row = await db()('reportSubmissions').where({ id }).first();
    expect(row.status).toBe('submitted');
    expect(row.error).toMatch(/outcome unknown/i);
    // Filed exactly once: one P upload, and exactly one upload request reached the portal.
    expect(fake.uploads.slice(before).filter((u) => u.uebermittlung === 'P')).toHaveLength(1);
    expect(fake.requests.filter((r) => r.soapAction === 'upload')).toHaveLength(1);
    // The submission is visible to the user with that state.
    const view = await admin.get(`/api/reports/ust/submissions/${id}`);
    expect(view.body).toMatchObject({ id, status: 'submitted', mode: 'live' });
  }, 90_000);
});
