import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server';
import { client, type TestClient } from '../helpers/http';
import { createTeam } from '../helpers/factories';
import { signAccessToken } from '../../shared/auth/accessToken';
import { Readable } from 'node:stream';
import getRawBody from 'raw-body';
import { toAppError } from '../../api/middleware/errorHandler';

let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;

beforeAll(async () => {
  server = await startTestServer({ BODY_LIMIT_BYTES: '2048' });
  http = client(server.url);
});
afterAll(async () => server.close());

const expectEnvelope = (body: any, status: number, code: string) => {
  expect(body).toMatchObject({ error: { status, code, message: expect.any(String) } });
};

describe('health and readiness', () => {
  it('GET /health answers 200 ok', async () => {
    const res = await http.get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('GET /ready checks PostgreSQL and Redis', async () => {
    const res = await http.get('/ready');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
  });
});

describe('error envelope', () => {
  it('unknown route → 404 NOT_FOUND', async () => {
    const res = await http.get('/api/nothing-here');
    expect(res.status).toBe(404);
    expectEnvelope(res.body, 404, 'NOT_FOUND');
  });

  it('a body that is not JSON is 415, not read as no body; a body-less action needs no content type', async () => {
    const { admin, tenant } = await createTeam();
    const post = (path: string, body: string | undefined, type?: string) =>
      fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${admin.token}`, ...(type ? { 'content-type': type } : {}) }, body });
    for (const [body, type] of [
      ['hello', 'text/plain'],
      ['name=Form', 'application/x-www-form-urlencoded'],
    ]) {
      const res = await post('/api/customers', body, type);
      expect(res.status, type).toBe(415);
      expectEnvelope(await res.json(), 415, 'INVALID_INPUT');
    }
    expect((await post('/api/customers', '{"name":"Json"}', 'application/json; charset=utf-8')).status).toBe(201);
    // An unknown path stays 404, whatever it carries.
    expect((await post('/api/nothing-here', 'hello', 'text/plain')).status).toBe(404);
    // No body at all (curl -X POST …/cancel sends no content type): the action runs.
    const { createSentInvoice } = await import('../helpers/invoiceFactory');
    const inv = await createSentInvoice(tenant);
    expect((await post(`/api/invoices/${inv.id}/cancel`, undefined)).status).toBe(200);
  });

  it('paths are case-sensitive: /API/… is 404 (no route, so no policy keyed on the path can be stepped around)', async () => {
    const { admin } = await createTeam();
    const authed = client(server.url, { token: admin.token });
    expect((await authed.get('/api/customers')).status).toBe(200);
    for (const path of ['/API/customers', '/Api/auth/me', '/api/Customers']) {
      const res = await authed.get(path);
      expect(res.status).toBe(404);
      expectEnvelope(res.body, 404, 'NOT_FOUND');
    }
    // A webhook path in another case used to reach the raw-body reader after the JSON parser had
    // read the body, and waited forever; now it is answered at once.
    const res = await fetch(`${server.url}/API/payment-import/stripe/some-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
      signal: AbortSignal.timeout(5000),
    });
    expect(res.status).toBe(404);
  });

  it('every response carries a request id, and a sane client id is echoed', async () => {
    const res = await http.get('/health', { headers: { 'X-Request-Id': 'client-req-12345' } });
    expect(res.headers.get('x-request-id')).toBe('client-req-12345');
    const res2 = await http.get('/health', { headers: { 'X-Request-Id': 'bad id with spaces' } });
    expect(res2.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('malformed JSON → 400 INVALID_INPUT, never 500', async () => {
    const { admin } = await createTeam();
    const res = await http.request('POST', '/api/maintenance/purge-customers', {
      token: admin.token,
      rawBody: '{"broken": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expectEnvelope(res.body, 400, 'INVALID_INPUT');
    expect(res.body.error.message).toMatch(/JSON/);
  });

  it('an action that takes no body refuses fields instead of ignoring them (400 with details); none or {} is fine', async () => {
    const { admin } = await createTeam();
    const auth = { token: admin.token };
    const refused = await http.post('/api/maintenance/purge-customers', { force: true }, auth);
    expect(refused.status).toBe(400);
    expectEnvelope(refused.body, 400, 'INVALID_INPUT');
    expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'force' })]);
    expect((await http.post('/api/maintenance/purge-customers', {}, auth)).status).toBe(202);
    expect((await http.request('POST', '/api/maintenance/purge-customers', auth)).status).toBe(202);
  });

  it('body over the limit → 413 in the envelope', async () => {
    const { admin } = await createTeam();
    const res = await http.post('/api/maintenance/purge-customers', { pad: 'x'.repeat(5000) }, { token: admin.token });
    expect(res.status).toBe(413);
    expectEnvelope(res.body, 413, 'INVALID_INPUT');
  });

  it('a body the client stopped sending before it was read is its failure (400), not a 500', async () => {
    // What koa-body meets when the connection closed while the request waited for the rate limiter.
    const gone = Readable.from(['{}']);
    gone.destroy();
    const err = await getRawBody(gone).catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'stream.not.readable' });
    expect(toAppError(err, 1024)).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
  });

  it('path ids that are not UUIDs → 400 INVALID_INPUT with details', async () => {
    const { admin } = await createTeam();
    // /jobs/:key takes any key, so use a route group whose ids are UUIDs once they exist; here the
    // validation layer is exercised through a params schema on the maintenance job route instead.
    const res = await http.get(`/api/maintenance/jobs/${'k'.repeat(300)}`, { token: admin.token });
    expect(res.status).toBe(400);
    expectEnvelope(res.body, 400, 'INVALID_INPUT');
    expect(res.body.error.details[0]).toMatchObject({ field: 'key' });
  });

  it('missing token → 401 UNAUTHORIZED; expired → 401 TOKEN_EXPIRED; forged → 401', async () => {
    const missing = await http.post('/api/maintenance/purge-customers');
    expect(missing.status).toBe(401);
    expectEnvelope(missing.body, 401, 'UNAUTHORIZED');

    const { admin } = await createTeam();
    const expired = signAccessToken({ sub: admin.id, tid: admin.tenantId, role: 'admin' }, { ttlSec: -10 });
    const res = await http.post('/api/maintenance/purge-customers', undefined, { token: expired });
    expect(res.status).toBe(401);
    expectEnvelope(res.body, 401, 'TOKEN_EXPIRED');

    const forged = signAccessToken({ sub: admin.id, tid: admin.tenantId, role: 'admin' }, { secret: 'another-secret-of-at-least-32-characters!!' });
    const res2 = await http.post('/api/maintenance/purge-customers', undefined, { token: forged });
    expect(res2.status).toBe(401);
    expectEnvelope(res2.body, 401, 'UNAUTHORIZED');
  });

  it('insufficient role → 403 FORBIDDEN', async () => {
    const { viewer, manager } = await createTeam();
    for (const u of [viewer, manager]) {
      const res = await http.post('/api/maintenance/purge-customers', undefined, { token: u.token });
      expect(res.status).toBe(403);
      expectEnvelope(res.body, 403, 'FORBIDDEN');
    }
  });
});

describe('current user state', () => {
  it('a deactivated user is refused and a demoted user loses rights before the token expires', async () => {
    const { admin, manager } = await createTeam();
    const { db } = await import('../../shared/db');
    await db()('users').where({ id: admin.id }).update({ role: 'viewer' });
    await db()('users').where({ id: manager.id }).update({ active: false });
    // The per-process cache holds a user's state for at most 5 s; skip the wait here.
    const { forgetUserStates } = await import('../../api/middleware/authenticate');
    forgetUserStates();
    const demoted = await http.post('/api/maintenance/purge-customers', undefined, { token: admin.token });
    expect(demoted.status).toBe(403);
    const gone = await http.get('/api/maintenance/jobs/some-job', { token: manager.token });
    expect(gone.status).toBe(401);
    expectEnvelope(gone.body, 401, 'UNAUTHORIZED');
  });
});
