import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import { startTestServer } from '../../helpers/server';
import { createTeam } from '../../helpers/factories';
import { createCustomer } from '../../helpers/invoiceFactory';

/** The three regional front ends (Austria, Germany, EU). */
const ORIGINS = ['https://app.example.at', 'https://app.example.de', 'https://app.example.eu'];

let server: Awaited<ReturnType<typeof startTestServer>>;
beforeAll(async () => {
  server = await startTestServer({ CORS_ORIGINS: ORIGINS.join(', ') });
});
afterAll(async () => server.close());

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** node:http rather than fetch: fetch hides Content-Encoding by decompressing transparently. */
function raw(method: string, path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const preflight = (origin: string, path = '/api/invoices', method = 'POST') =>
  raw('OPTIONS', path, {
    origin,
    'access-control-request-method': method,
    'access-control-request-headers': 'authorization, content-type, idempotency-key',
  });

describe('CORS for the regional front ends', () => {
  it.each(ORIGINS)('answers a preflight from %s with that origin', async (origin) => {
    const res = await preflight(origin);
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(origin);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(String(res.headers['access-control-allow-methods'])).toMatch(/POST/);
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase();
    for (const h of ['authorization', 'content-type', 'idempotency-key', 'if-none-match']) expect(allowed).toContain(h);
    expect(String(res.headers.vary)).toMatch(/Origin/i);
  });

  it('a request without Origin (any API client but a browser) gets Vary: Origin and no CORS grant', async () => {
    const res = await raw('GET', '/health');
    expect(res.status).toBe(200);
    expect(String(res.headers.vary)).toMatch(/Origin/i);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it.each(['https://evil.example.com', 'https://app.example.at.evil.example', 'http://app.example.at', 'null'])('gives no CORS grant to %s', async (origin) => {
    const res = await preflight(origin);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    const simple = await raw('GET', '/health', { origin });
    expect(simple.status).toBe(200);
    expect(simple.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('exposes X-Request-Id, Retry-After and ETag to the allowed front ends', async () => {
    for (const origin of ORIGINS) {
      const res = await raw('GET', '/health', { origin, 'x-request-id': 'cors-test-1' });
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
      const exposed = String(res.headers['access-control-expose-headers'])
        .split(',')
        .map((h) => h.trim().toLowerCase());
      expect(exposed).toEqual(expect.arrayContaining(['x-request-id', 'retry-after', 'etag']));
      expect(res.headers['x-request-id']).toBe('cors-test-1');
    }
  });

  it('error answers to an allowed origin are readable too (CORS headers on 401)', async () => {
    const res = await raw('GET', '/api/invoices', { origin: ORIGINS[1] });
    expect(res.status).toBe(401);
    expect(res.headers['access-control-allow-origin']).toBe(ORIGINS[1]);
  });
});

describe('gzip', () => {
  it('compresses a large JSON list when the client accepts gzip, and not otherwise', async () => {
    const team = await createTeam();
    for (let i = 0; i < 40; i++)
      await createCustomer(team.tenant, { name: `Kunde ${String(i).padStart(2, '0')} Handelsgesellschaft m.b.H.`, address: 'Mariahilfer Straße 1\n1060 Wien' });
    const auth = { authorization: `Bearer ${team.viewer.token}` };

    const gz = await raw('GET', '/api/customers', { ...auth, 'accept-encoding': 'gzip' });
    expect(gz.status).toBe(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(String(gz.headers['content-type'])).toMatch(/application\/json/);
    expect(String(gz.headers.vary)).toMatch(/Accept-Encoding/i);
    const json = gunzipSync(gz.body);
    const list = JSON.parse(json.toString('utf8'));
    expect(list).toHaveLength(40);
    expect(json.length).toBeGreaterThan(4096);
    expect(gz.body.length).toBeLessThan(json.length / 2);

    const plain = await raw('GET', '/api/customers', { ...auth, 'accept-encoding': 'identity' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.equals(json)).toBe(true);
  });

  it('leaves small responses uncompressed (below the 1 KiB threshold)', async () => {
    const res = await raw('GET', '/health', { 'accept-encoding': 'gzip' });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
  });
});
