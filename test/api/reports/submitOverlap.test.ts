import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UnrecoverableError } from 'bullmq';
import { reloadConfig } from '../../../shared/config';
import { db } from '../../../shared/db';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { startFakeFinanzOnline, type FakeFinanzOnline } from '../../helpers/fakeFinanzOnline';
import { submitU30Job } from '../../../workers/jobs/tax-portal/submitU30';
import { smallAustrianBook } from './books';

/**
 * Live-filing rules of POST /api/reports/ust/submit that need the submissions to stay where they
 * are: no worker runs in this file, so a submission stays `queued` (in flight) until the test
 * moves it. Plus the job's final answer when a live upload's outcome is unknown, with the upload
 * URL pointing at a closed port (the login works, the upload dies on the network).
 */
let fake: FakeFinanzOnline;
let server: Awaited<ReturnType<typeof startTestServer>>;
const credentials = { tid: '123456789012', benid: 'WEBSRV01', pin: 'secret-pin', herstellerid: 'ATU12345678' };

beforeAll(async () => {
  fake = await startFakeFinanzOnline();
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const deadPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  process.env.FINANZONLINE_SESSION_URL = fake.sessionUrl;
  process.env.FINANZONLINE_FILEUPLOAD_URL = `http://127.0.0.1:${deadPort}/fon/ws/fileupload`;
  reloadConfig();
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

async function tenant() {
  const team = await smallAustrianBook();
  const admin = client(server.url, { token: team.admin.token });
  expect((await admin.put('/api/settings', { portalCredentials: credentials })).status).toBe(200);
  return { team, admin };
}

const submit = (http: TestClient, body: Record<string, unknown>) => http.post('/api/reports/ust/submit', { year: 2026, mode: 'live', ...body });
const setStatus = (id: string, status: string) => db()('reportSubmissions').where({ id }).update({ status });

describe('live submissions of overlapping periods', () => {
  it('a month and its quarter overlap: refused while the other is in flight or accepted, naming it', async () => {
    const { admin } = await tenant();
    const march = await submit(admin, { month: 3 });
    expect(march.status).toBe(202);
    const marchId = march.body.submissionId;

    // March is queued (in flight): Q1 is refused, with or without the resubmission flag.
    for (const extra of [{}, { resubmission: true }]) {
      const q1 = await submit(admin, { quarter: 1, ...extra });
      expect(q1.status, JSON.stringify(extra)).toBe(409);
      expect(q1.body.error.code).toBe('DUPLICATE');
      expect(q1.body.error.message).toContain(`The U30 for 2026-Q1 overlaps 2026-03: live submission ${marchId} for 2026-03 is still in flight (queued)`);
      expect(q1.body.error.conflictingSubmission).toEqual({ id: marchId, period: '2026-03', status: 'queued', outcomeUnknown: false });
    }
    // Test mode is never filed, so it never conflicts.
    expect((await submit(admin, { quarter: 1, mode: 'test' })).status).toBe(202);

    await setStatus(marchId, 'accepted');
    const q1 = await submit(admin, { quarter: 1 });
    expect(q1.status).toBe(409);
    expect(q1.body.error.message).toMatch(/overlaps 2026-03: .* was accepted by FinanzOnline; send resubmission: true/);
    // A corrected return over the filed month: allowed, and then in flight itself.
    const correction = await submit(admin, { quarter: 1, resubmission: true });
    expect(correction.status).toBe(202);
    const marchAgain = await submit(admin, { month: 3, resubmission: true });
    expect(marchAgain.status).toBe(409);
    expect(marchAgain.body.error.conflictingSubmission).toMatchObject({ id: correction.body.submissionId, period: '2026-Q1', status: 'queued' });
    // February is inside the Q1 correction too; April is not.
    expect((await submit(admin, { month: 2 })).status).toBe(409);
    const april = await submit(admin, { month: 4 });
    expect(april.status).toBe(202);

    // A rejected submission blocks nothing.
    await setStatus(april.body.submissionId, 'rejected');
    expect((await submit(admin, { quarter: 2 })).status).toBe(202);
  });

  it('concurrent live requests for a month and its quarter: exactly one is queued', async () => {
    const { team, admin } = await tenant();
    const racing = await Promise.all([3, 'Q1', 3, 'Q1', 3, 'Q1'].map((p) => submit(admin, p === 'Q1' ? { quarter: 1 } : { month: p })));
    expect(racing.map((r) => r.status).sort()).toEqual([202, 409, 409, 409, 409, 409]);
    for (const r of racing.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('DUPLICATE');
    const rows = await db()('reportSubmissions').where({ tenantId: team.tenant.id, mode: 'live' });
    expect(rows).toHaveLength(1);
  });

  it('concurrent resubmissions over an accepted month: at most one in flight', async () => {
    const { team, admin } = await tenant();
    const first = await submit(admin, { month: 3 });
    await setStatus(first.body.submissionId, 'accepted');
    const racing = await Promise.all([3, 'Q1', 3, 'Q1'].map((p) => submit(admin, { resubmission: true, ...(p === 'Q1' ? { quarter: 1 } : { month: p }) })));
    expect(racing.map((r) => r.status).sort()).toEqual([202, 409, 409, 409]);
    const inFlight = await db()('reportSubmissions').where({ tenantId: team.tenant.id, mode: 'live' }).whereIn('status', ['queued', 'submitted']);
    expect(inFlight).toHaveLength(1);
  });
});

describe('a live upload whose outcome is unknown', () => {
  const run = (team: { tenant: { id: string } }, id: string, attemptsMade: number) =>
    submitU30Job({ id: `u30-${id}`, data: { tenantId: team.tenant.id, submissionId: id }, attemptsMade, opts: { attempts: 10 } } as never);

  it('network failure on the last attempt: stays submitted with outcomeUnknown (never rejected), until an admin resolves it', async () => {
    const { team, admin } = await tenant();
    const res = await submit(admin, { month: 3 });
    const id = res.body.submissionId;
    await expect(run(team, id, 9)).rejects.toBeInstanceOf(UnrecoverableError);

    const view = (await admin.get(`/api/reports/ust/submissions/${id}`)).body;
    expect(view).toMatchObject({ status: 'submitted', outcomeUnknown: true, resolution: null, attempts: 1 });
    expect(view.error).toMatch(/outcome unknown.*DataBox/i);
    // The month stays blocked until resolved.
    expect((await submit(admin, { month: 3, resubmission: true })).body.error.message).toContain(`/api/reports/ust/submissions/${id}/resolve`);

    const resolved = await admin.post(`/api/reports/ust/submissions/${id}/resolve`, { outcome: 'accepted' });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ status: 'accepted', outcomeUnknown: false, resolution: { outcome: 'accepted', by: team.admin.id, note: null } });
    expect((await submit(admin, { month: 3 })).body.error.message).toMatch(/accepted by FinanzOnline; send resubmission: true/);
    const audit = await db()('auditLog').where({ tenantId: team.tenant.id, entityId: id, action: 'vat_return.submission_resolved' });
    expect(audit).toHaveLength(1);
  });

  it('network failure before the last attempt: retried; the retry settles it as outcome unknown without uploading', async () => {
    const { team, admin } = await tenant();
    const res = await submit(admin, { month: 3 });
    const id = res.body.submissionId;
    await expect(run(team, id, 0)).rejects.toThrow();
    expect(await db()('reportSubmissions').where({ id }).first('status', 'outcomeUnknown')).toEqual({ status: 'submitted', outcomeUnknown: false });
    const uploads = fake.uploads.length;
    expect(await run(team, id, 1)).toEqual({ status: 'submitted', outcomeUnknown: true });
    expect(fake.uploads.length).toBe(uploads);
    expect((await admin.get(`/api/reports/ust/submissions/${id}`)).body.outcomeUnknown).toBe(true);
  });

  it('only an unknown live outcome can be resolved; another tenant gets 404', async () => {
    const { admin } = await tenant();
    const queued = await submit(admin, { month: 3 });
    const res = await admin.post(`/api/reports/ust/submissions/${queued.body.submissionId}/resolve`, { outcome: 'rejected' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/Only a live submission whose upload outcome is unknown/);
    const other = await tenant();
    expect((await other.admin.post(`/api/reports/ust/submissions/${queued.body.submissionId}/resolve`, { outcome: 'rejected' })).status).toBe(404);
  });
});
