import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reloadConfig } from '../../../shared/config';
import { db } from '../../../shared/db';
import { getQueue } from '../../../shared/queues';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { startFakeFinanzOnline, type FakeFinanzOnline } from '../../helpers/fakeFinanzOnline';
import { startWorkers, type RunningWorkers } from '../../../workers/worker';
import { smallAustrianBook } from './books';

/**
 * U30 submission end to end: API → report_submissions row → tax-portal job (real worker) → the
 * fake FinanzOnline (session + fileupload SOAP services on a local port).
 */
let fake: FakeFinanzOnline;
let server: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;
const credentials = { tid: '123456789012', benid: 'WEBSRV01', pin: 'secret-pin', herstellerid: 'ATU12345678' };

beforeAll(async () => {
  fake = await startFakeFinanzOnline();
  process.env.FINANZONLINE_SESSION_URL = fake.sessionUrl;
  process.env.FINANZONLINE_FILEUPLOAD_URL = fake.fileUploadUrl;
  reloadConfig();
  server = await startTestServer();
  workers = await startWorkers({ queues: ['tax-portal'], schedule: false });
});
afterAll(async () => {
  await workers?.close();
  await server?.close();
  await fake?.close();
});

async function tenantWithCredentials() {
  const team = await smallAustrianBook();
  const admin = client(server.url, { token: team.admin.token });
  const res = await admin.put('/api/settings', { portalCredentials: credentials });
  expect(res.status).toBe(200);
  return { team, admin };
}

/** Poll the submission until it reaches a final state (or, with `until`, that state). */
async function settled(http: TestClient, id: string, until: string[] = ['accepted', 'rejected']) {
  let body: any;
  for (let i = 0; i < 300; i++) {
    const res = await http.get(`/api/reports/ust/submissions/${id}`);
    expect(res.status).toBe(200);
    body = res.body;
    if (until.includes(body.status)) return body;
    await new Promise((r) => setTimeout(r, 100));
  }
  return body;
}

describe('POST /api/reports/ust/submit', () => {
  it('test mode: login, upload with uebermittlung T, logout; the portal answer is stored', async () => {
    const { team, admin } = await tenantWithCredentials();
    const before = fake.uploads.length;
    const res = await admin.post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'test' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ submissionId: expect.any(String), status: 'queued' });
    const id = res.body.submissionId;

    const done = await settled(client(server.url, { token: team.viewer.token }), id);
    expect(done).toMatchObject({ id, year: 2026, period: '2026-03', mode: 'test', status: 'accepted', error: null, attempts: 1 });
    expect(done.portalResponse).toMatchObject({ rc: 0, mode: 'test', uebermittlung: 'T' });
    expect(typeof done.createdAt).toBe('string');

    const uploads = fake.uploads.slice(before);
    expect(uploads).toHaveLength(1);
    const up = uploads[0];
    expect(up).toMatchObject({ tid: credentials.tid, benid: credentials.benid, art: 'U30', uebermittlung: 'T' });
    expect(up.data).toContain('<KZ000 type="kz">1000.00</KZ000>');
    expect(up.data).toContain('<KZ022 type="kz">1000.00</KZ022>');
    expect(up.data).toContain('<FASTNR>123456789</FASTNR>');
    expect(fake.loggedOut).toContain(up.sessionId);
    // What was uploaded is the payload stored with the submission.
    const row = await db()('reportSubmissions').where({ id }).first();
    expect(row.payload.toString('latin1')).toContain('<KZ022 type="kz">1000.00</KZ022>');
    // The job carries ids only: no credentials, no document.
    const job = await getQueue('tax-portal').getJob(`u30-${id}`);
    expect(Object.keys(job!.data).sort()).toEqual(['submissionId', 'tenantId']);
    expect(JSON.stringify(job!.data)).not.toContain(credentials.pin);
  });

  it('the portal rejects the file → rejected with its answer, no retry', async () => {
    const { admin } = await tenantWithCredentials();
    fake.rejectNextUpload(-4, 'XML-Datei fehlerhaft');
    const res = await admin.post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'test' });
    const done = await settled(admin, res.body.submissionId);
    expect(done.status).toBe('rejected');
    expect(done.attempts).toBe(1);
    expect(done.portalResponse).toMatchObject({ rc: -4, msg: 'XML-Datei fehlerhaft', code: 'XML_REJECTED' });
    expect(done.error).toMatch(/refused/);
  });

  it('HTTP 503 twice, then success → accepted after retries', async () => {
    const { admin } = await tenantWithCredentials();
    const before = fake.uploads.length;
    fake.failNext(2, 503);
    const res = await admin.post('/api/reports/ust/submit', { year: 2026, quarter: 1, mode: 'test' });
    const done = await settled(admin, res.body.submissionId);
    expect(done.status).toBe('accepted');
    expect(done.period).toBe('2026-Q1');
    expect(done.attempts).toBe(3);
    expect(fake.uploads.length - before).toBe(1);
  });

  it('wrong credentials are permanent → rejected', async () => {
    const { admin } = await tenantWithCredentials();
    await admin.put('/api/settings', { portalCredentials: { ...credentials, pin: 'wrong-pin' } });
    const res = await admin.post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'test' });
    const done = await settled(admin, res.body.submissionId);
    expect(done.status).toBe('rejected');
    expect(done.attempts).toBe(1);
    expect(done.portalResponse).toMatchObject({ code: 'AUTH_FAILED' });
  });

  it('no portal credentials → 400 with a clear message, nothing stored', async () => {
    const team = await smallAustrianBook();
    const res = await client(server.url, { token: team.admin.token }).post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'test' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/No FinanzOnline credentials/);
    expect(await db()('reportSubmissions').where({ tenantId: team.tenant.id })).toHaveLength(0);
  });

  it('live: a month is filed once; again only with resubmission: true once the first is done; overlapping periods count', async () => {
    const { admin } = await tenantWithCredentials();
    const before = fake.uploads.length;
    const first = await admin.post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'live' });
    expect(first.status).toBe(202);
    const firstId = first.body.submissionId;
    const dup = await admin.post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'live' });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('DUPLICATE');
    // The answer names the submission that blocks (in flight or already accepted, depending on the worker's speed).
    expect(dup.body.error.message).toContain(firstId);
    expect(dup.body.error.conflictingSubmission).toMatchObject({ id: firstId, period: '2026-03' });
    // Test mode never counts as filed.
    expect((await admin.post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'test' })).status).toBe(202);
    expect((await settled(admin, firstId)).status).toBe('accepted');

    const accepted = await admin.post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'live' });
    expect(accepted.status).toBe(409);
    expect(accepted.body.error.message).toMatch(/accepted by FinanzOnline; send resubmission: true/);
    // A quarter containing the filed month overlaps it: refused, naming the March submission.
    const quarter = await admin.post('/api/reports/ust/submit', { year: 2026, quarter: 1, mode: 'live' });
    expect(quarter.status).toBe(409);
    expect(quarter.body.error.message).toContain(`overlaps 2026-03: live submission ${firstId}`);
    expect(quarter.body.error.conflictingSubmission).toMatchObject({ id: firstId, period: '2026-03', status: 'accepted' });

    const again = await admin.post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'live', resubmission: true });
    expect(again.status).toBe(202);
    expect((await settled(admin, again.body.submissionId)).status).toBe('accepted');
    // After acceptance a plain live submission is still a duplicate.
    expect((await admin.post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'live' })).status).toBe(409);
    const live = fake.uploads.slice(before).filter((u) => u.uebermittlung === 'P');
    expect(live).toHaveLength(2);
  });

  it('a retry of a job whose upload was accepted does not upload again', async () => {
    const { team, admin } = await tenantWithCredentials();
    const res = await admin.post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'test' });
    const id = res.body.submissionId;
    await settled(admin, id);
    const before = fake.uploads.length;
    const { submitU30Job } = await import('../../../workers/jobs/tax-portal/submitU30');
    const result = await submitU30Job({
      id: `u30-${id}`,
      data: { tenantId: team.tenant.id, submissionId: id },
      attemptsMade: 1,
      opts: { attempts: 10 },
    } as never);
    expect(result).toMatchObject({ status: 'accepted', alreadyDone: true });
    expect(fake.uploads.length).toBe(before);
  });

  /** A live submission row waiting for its job (as submitVatReturn leaves it), and a runner for that job's attempts. */
  async function queuedLiveRow(period: string) {
    const { team, admin } = await tenantWithCredentials();
    const [row] = await db()('reportSubmissions')
      .insert({ tenantId: team.tenant.id, kind: 'u30', year: 2026, period, mode: 'live', status: 'queued', payload: Buffer.from('<x/>') })
      .returning('id');
    const { submitU30Job } = await import('../../../workers/jobs/tax-portal/submitU30');
    const run = (attemptsMade: number) =>
      submitU30Job({ id: `u30-${row.id}`, data: { tenantId: team.tenant.id, submissionId: row.id }, attemptsMade, opts: { attempts: 10 } } as never);
    const read = () => db()('reportSubmissions').where({ id: row.id }).first();
    const livePs = () => fake.uploads.filter((u) => u.uebermittlung === 'P' && u.data === '<x/>').length;
    return { team, admin, row, run, read, livePs };
  }

  it('live: a gateway error after the portal took the file (504, or a 502 HTML page) is not proof it was not taken: no second upload', async () => {
    const gateways = [
      { period: '2026-04', status: 504, html: false },
      { period: '2026-05', status: 502, html: true },
    ];
    for (const { period, status, html } of gateways) {
      const { run, read, livePs } = await queuedLiveRow(period);
      const before = livePs();
      fake.takeThenFailNextUpload(status, { html });
      await expect(run(0)).rejects.toThrow();
      expect(await read()).toMatchObject({ status: 'submitted', outcomeUnknown: false });
      // BullMQ's retry: it must not upload P again (it did: the 5xx counted as "not taken").
      expect(await run(1)).toMatchObject({ status: 'submitted', outcomeUnknown: true });
      expect(await read()).toMatchObject({ status: 'submitted', outcomeUnknown: true });
      expect(livePs()).toBe(before + 1);
    }
  });

  it("live: the portal's own answer rc −2 (maintenance) proves the file was not taken: the retry uploads", async () => {
    const { run, read, livePs } = await queuedLiveRow('2026-06');
    const before = livePs();
    fake.rejectNextUpload(-2, 'Wartungsarbeiten');
    await expect(run(0)).rejects.toThrow(/maintenance/);
    expect(await read()).toMatchObject({ status: 'queued', outcomeUnknown: false });
    expect(await run(1)).toMatchObject({ status: 'accepted' });
    expect(livePs()).toBe(before + 1);
  });

  it('live: two runs of one job at once (a lapsed lock) upload once', async () => {
    const { run, read, livePs } = await queuedLiveRow('2026-07');
    const before = livePs();
    // The first run's login answers late; the second starts meanwhile, as BullMQ's stalled check would start it.
    fake.delayNext(1, 300);
    const first = run(0);
    await new Promise((r) => setTimeout(r, 50));
    const results = await Promise.all([first, run(1)]);
    expect(livePs()).toBe(before + 1);
    // One run uploaded; the other found the row claimed (or already accepted) and did not.
    expect(results.filter((r) => r.status === 'accepted' && !('alreadyDone' in r))).toHaveLength(1);
    expect(await read()).toMatchObject({ status: 'accepted', outcomeUnknown: false });
  });

  it('a live submission left "submitted" (outcome unknown) is not uploaded again by a retry', async () => {
    const { team, admin } = await tenantWithCredentials();
    // As if a worker died after sending the upload: the row says submitted, nothing was recorded.
    const [row] = await db()('reportSubmissions')
      .insert({ tenantId: team.tenant.id, kind: 'u30', year: 2026, period: '2026-02', mode: 'live', status: 'submitted', payload: Buffer.from('<x/>') })
      .returning('id');
    const before = fake.uploads.length;
    const { submitU30Job } = await import('../../../workers/jobs/tax-portal/submitU30');
    const result = await submitU30Job({
      id: `u30-${row.id}`,
      data: { tenantId: team.tenant.id, submissionId: row.id },
      attemptsMade: 1,
      opts: { attempts: 10 },
    } as never);
    expect(result).toMatchObject({ status: 'submitted', outcomeUnknown: true });
    expect(fake.uploads.length).toBe(before);
    const view = (await admin.get(`/api/reports/ust/submissions/${row.id}`)).body;
    expect(view).toMatchObject({ status: 'submitted', outcomeUnknown: true, resolution: null });
    expect(view.error).toMatch(/DataBox/);
    expect(view.error).toContain(`/api/reports/ust/submissions/${row.id}/resolve`);

    // Unresolved, it blocks the month — also for a resubmission — and says how to resolve it.
    for (const body of [
      { year: 2026, month: 2, mode: 'live' },
      { year: 2026, quarter: 1, mode: 'live', resubmission: true },
    ]) {
      const blocked = await admin.post('/api/reports/ust/submit', body);
      expect(blocked.status, JSON.stringify(body)).toBe(409);
      expect(blocked.body.error.message).toContain(`POST /api/reports/ust/submissions/${row.id}/resolve`);
    }
    // Only admins resolve; an outcome must be given.
    expect(
      (await client(server.url, { token: team.manager.token }).post(`/api/reports/ust/submissions/${row.id}/resolve`, { outcome: 'rejected' })).status,
    ).toBe(403);
    expect((await admin.post(`/api/reports/ust/submissions/${row.id}/resolve`, { outcome: 'maybe' })).status).toBe(400);

    // The DataBox shows nothing arrived: rejected, and the month can be filed again (no resubmission flag needed).
    const resolved = await admin.post(`/api/reports/ust/submissions/${row.id}/resolve`, { outcome: 'rejected', note: 'DataBox: no protocol' });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({
      status: 'rejected',
      outcomeUnknown: false,
      resolution: { outcome: 'rejected', by: team.admin.id, note: 'DataBox: no protocol' },
    });
    expect((await admin.post(`/api/reports/ust/submissions/${row.id}/resolve`, { outcome: 'accepted' })).status).toBe(400);
    const refile = await admin.post('/api/reports/ust/submit', { year: 2026, month: 2, mode: 'live' });
    expect(refile.status).toBe(202);
    expect((await settled(admin, refile.body.submissionId)).status).toBe('accepted');
    expect(fake.uploads.length).toBe(before + 1);
    // A job retry of the resolved row does nothing.
    expect(
      await submitU30Job({ id: `u30-${row.id}`, data: { tenantId: team.tenant.id, submissionId: row.id }, attemptsMade: 2, opts: { attempts: 10 } } as never),
    ).toMatchObject({
      status: 'rejected',
      alreadyDone: true,
    });
  });
});

describe('roles and isolation', () => {
  it('only admins submit; viewers read; another tenant gets 404', async () => {
    const { team, admin } = await tenantWithCredentials();
    for (const role of ['member', 'manager', 'viewer'] as const) {
      const res = await client(server.url, { token: team[role].token }).post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'test' });
      expect(res.status, role).toBe(403);
    }
    const res = await admin.post('/api/reports/ust/submit', { year: 2026, month: 3, mode: 'test' });
    const id = res.body.submissionId;
    expect((await client(server.url, { token: team.viewer.token }).get(`/api/reports/ust/submissions/${id}`)).status).toBe(200);
    const other = await createTeam({ country: 'AT' });
    const foreign = await client(server.url, { token: other.admin.token }).get(`/api/reports/ust/submissions/${id}`);
    expect(foreign.status).toBe(404);
    await settled(admin, id);
  });

  it('validation: unknown fields, missing mode, both month and quarter → 400', async () => {
    const { admin } = await tenantWithCredentials();
    for (const body of [
      { year: 2026, month: 3, mode: 'test', extra: 1 },
      { year: 2026, month: 3 },
      { year: 2026, month: 3, quarter: 1, mode: 'test' },
      { year: 2026, month: 3, mode: 'prod' },
    ]) {
      expect((await admin.post('/api/reports/ust/submit', body)).status, JSON.stringify(body)).toBe(400);
    }
  });
});
