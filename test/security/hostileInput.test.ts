import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { startTestServer } from '../helpers/server';
import { client, type HttpResponse, type TestClient } from '../helpers/http';
import { createTeam } from '../helpers/factories';
import { deliver, install, stripeDelivery, stripePaymentEvent } from '../helpers/webhookFactory';
import { allRoutes, describeResponse, envelopeProblem, FIXED_PARAMS, routeName } from './routes';
import type { RegisteredRoute } from '../../api/routing';

/**
 * Hostile input at the HTTP layer (issue 32; docs/resilience.md "Hostile input"): bodies whose
 * Content-Encoding does not decode or is not supported, over-size bodies on a kept-alive
 * connection, requests built to make the error answer large, and a property over every route
 * with random bytes, encodings and nesting. Through a real listening server; raw sockets where
 * fetch would hide what the server does with the connection.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
let anon: TestClient;
let admin: TestClient;
let adminToken: string;

beforeAll(async () => {
  server = await startTestServer();
  const team = await createTeam({ plan: 'business' });
  adminToken = team.admin.token;
  admin = client(server.url, { token: adminToken });
  anon = client(server.url);
});
afterAll(async () => {
  await server?.close();
});

const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const post = (path: string, body: Buffer | string, headers: Record<string, string>, http: TestClient = anon) =>
  http.request('POST', path, { rawBody: body, headers });

function expectError(res: HttpResponse, status: number, code = 'INVALID_INPUT') {
  expect(res.status, describeResponse(res)).toBe(status);
  expect(envelopeProblem(res), describeResponse(res)).toBeNull();
  expect(res.body.error.code).toBe(code);
}

const JSON_TYPE = { 'content-type': 'application/json' };
const customer = json({ name: 'Encoded GmbH' });
const truncatedGzip = gzipSync(json({ name: 'x'.repeat(200) })).subarray(0, 20);

describe('Content-Encoding of request bodies', () => {
  it('the reproduced request: "x" declared as deflate, no login → 400 INVALID_INPUT, not 500', async () => {
    const res = await post('/api/customers', 'x', { ...JSON_TYPE, 'content-encoding': 'deflate' });
    expectError(res, 400);
    expect(res.body.error.message).toMatch(/could not be decoded/);
  });

  it('truncated gzip, garbage br, garbage deflate, a gzip body declared as br → 400, with and without a login', async () => {
    const cases: [string, Buffer][] = [
      ['gzip', truncatedGzip],
      ['br', Buffer.from('definitely not brotli \x00\xff\xfe')],
      ['deflate', Buffer.from([0x78, 0x9c, 0xff, 0xff, 0x00, 0x01])],
      ['br', gzipSync(customer)],
      ['gzip', Buffer.from([0x1f])],
    ];
    for (const [encoding, body] of cases) {
      for (const [path, http] of [
        ['/api/customers', anon],
        ['/api/customers', admin],
        ['/api/auth/login', anon],
      ] as const) {
        const res = await post(path, body, { ...JSON_TYPE, 'content-encoding': encoding }, http);
        expectError(res, 400);
      }
    }
  });

  it('an unknown encoding or stacked encodings → 415, also when the bytes are a valid stack', async () => {
    const cases: [string, Buffer][] = [
      ['foo', customer],
      ['compress', customer],
      ['gzip, br', brotliCompressSync(gzipSync(customer))],
      ['gzip, gzip', gzipSync(gzipSync(customer))],
      ['deflate,identity,gzip', gzipSync(customer)],
    ];
    for (const [encoding, body] of cases) {
      const res = await post('/api/customers', body, { ...JSON_TYPE, 'content-encoding': encoding }, admin);
      expectError(res, 415);
      expect(res.body.error.message, encoding).toMatch(/Unsupported Content-Encoding/);
    }
  });

  it('a correctly compressed body is decoded (gzip, x-gzip, deflate, br, any case, identity)', async () => {
    const cases: [string, Buffer][] = [
      ['gzip', gzipSync(customer)],
      ['X-GZIP', gzipSync(customer)],
      ['deflate', deflateSync(customer)],
      ['br', brotliCompressSync(customer)],
      ['identity', customer],
      ['Gzip, identity', gzipSync(customer)],
    ];
    for (const [encoding, body] of cases) {
      const res = await post('/api/customers', body, { ...JSON_TYPE, 'content-encoding': encoding }, admin);
      expect(res.status, `${encoding}: ${describeResponse(res)}`).toBe(201);
      expect(res.body.name).toBe('Encoded GmbH');
    }
  });

  it('a compressed body is bounded by its decoded size: a 2 KB gzip of 2 MB is 413', async () => {
    const bomb = gzipSync(json({ name: '0'.repeat(2 * 1024 * 1024) }));
    expect(bomb.length).toBeLessThan(10_000);
    expectError(await post('/api/customers', bomb, { ...JSON_TYPE, 'content-encoding': 'gzip' }, admin), 413);
    expectError(await post('/api/payment-import/stripe/no-such-token', bomb, { ...JSON_TYPE, 'content-encoding': 'gzip' }), 413);
  });

  it('the raw-body webhook route: undecodable 400, unsupported 415, a gzip-compressed signed delivery is accepted', async () => {
    const path = '/api/payment-import/stripe/no-such-token-0123456789';
    expectError(await post(path, truncatedGzip, { ...JSON_TYPE, 'content-encoding': 'gzip' }), 400);
    expectError(await post(path, Buffer.from('garbage'), { ...JSON_TYPE, 'content-encoding': 'br' }), 400);
    expectError(await post(path, customer, { ...JSON_TYPE, 'content-encoding': 'foo' }), 415);
    expectError(await post(path, gzipSync(gzipSync(customer)), { ...JSON_TYPE, 'content-encoding': 'gzip, gzip' }), 415);

    const { admin: owner } = await createTeam({ country: 'DE' });
    const secret = `whsec_hostile_${randomUUID().replace(/-/g, '')}`;
    const stripe = await install(server.url, owner.token, 'stripe', { webhookSecret: secret });
    const delivery = stripeDelivery(secret, stripePaymentEvent());
    const res = await deliver(server.url, stripe.path, gzipSync(delivery.body), { ...delivery.headers, 'content-encoding': 'gzip' });
    expect(res.status, describeResponse(res)).toBe(200);
  });

  it('where no body is read the encoding is not judged: unknown paths stay 404, body-less GETs answer', async () => {
    // An unknown path with a form body: never parsed, 404 (as for its content type).
    const form = await post('/api/no-such-route', 'a=b', { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'foo' });
    expectError(form, 404, 'NOT_FOUND');
    // A JSON body is parsed before routing on every path (invalid JSON there is 400 too).
    expectError(await post('/api/no-such-route', truncatedGzip, { ...JSON_TYPE, 'content-encoding': 'gzip' }), 400);
    expectError(await post('/api/no-such-route', '{}', { ...JSON_TYPE, 'content-encoding': 'foo' }), 415);
    expectError(await post('/api/no-such-route', gzipSync('{}'), { ...JSON_TYPE, 'content-encoding': 'gzip' }), 404, 'NOT_FOUND');
    const get = await admin.get('/api/customers', { headers: { 'content-encoding': 'foo' } });
    expect(get.status).toBe(200);
  });
});

/** One raw HTTP/1.1 exchange: writes `bytes`, collects what comes back until the server closes (or `waitMs`). */
function rawExchange(bytes: Buffer, waitMs = 15_000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(server.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    // A reset while we were still writing is a close too (the answer was read before it).
    socket.on('error', () => finish(true));
    socket.write(bytes);
  });
}

function chunkedRequest(path: string, body: Buffer, extraHeaders = ''): Buffer {
  const head = `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n${extraHeaders}\r\n`;
  return Buffer.concat([Buffer.from(head), Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
}

const HEALTH = Buffer.from('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
/** The same, asking the server to close afterwards: the exchange ends without waiting. */
const HEALTH_THEN_CLOSE = Buffer.from('GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
const statusLines = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));

describe('the connection after an early error', () => {
  it('an over-size chunked body: 413 with Connection: close, and the socket is closed promptly', async () => {
    const big = Buffer.alloc(server.cfg.bodyLimitBytes + 256 * 1024, 0x20);
    big[0] = 0x7b; // "{" then spaces: JSON that only ends past the limit
    for (const path of ['/api/auth/login', '/api/payment-import/stripe/no-such-token-0123456789']) {
      const started = Date.now();
      const { text, closed } = await rawExchange(Buffer.concat([chunkedRequest(path, big), HEALTH]));
      expect(statusLines(text)[0], text.slice(0, 300)).toBe(413);
      expect(text).toMatch(/\r\nConnection: close\r\n/i);
      expect(closed, `${path}: the server kept the connection`).toBe(true);
      expect(Date.now() - started).toBeLessThan(10_000); // generous; it hung ~67 s before
    }
  });

  it('an undecodable chunked gzip body the client is still sending: 400 with Connection: close', async () => {
    // Not gzip from its first byte (header check fails), followed by 2 MB the client is still sending.
    const junk = Buffer.alloc(2 * 1024 * 1024, 0x41);
    const { text, closed } = await rawExchange(Buffer.concat([chunkedRequest('/api/auth/login', junk, 'Content-Encoding: gzip\r\n'), HEALTH]));
    expect(statusLines(text)[0], text.slice(0, 300)).toBe(400);
    expect(closed).toBe(true);
  });

  it('control: a small bad body that arrived whole keeps the connection usable for the next request', async () => {
    const { text } = await rawExchange(Buffer.concat([chunkedRequest('/api/auth/login', Buffer.from('{"email": ')), HEALTH_THEN_CLOSE]));
    expect(statusLines(text)).toEqual([400, 200]);
    expect(text.split('\r\n\r\n')[0]).not.toMatch(/Connection: close/i);
  });
});

describe('error answers stay small', () => {
  const bytesOf = (res: HttpResponse) => res.raw.length;

  it('100,000 empty invoice items (300 KB) → 400 of a few hundred bytes, stopped at maxItems', async () => {
    const body = Buffer.from(`{"type":"rechnung","items":[${Array(100_000).fill('{}').join(',')}]}`);
    expect(body.length).toBeGreaterThan(290_000);
    const res = await post('/api/invoices', body, JSON_TYPE, admin);
    expectError(res, 400);
    expect(bytesOf(res)).toBeLessThan(2_000);
    expect(res.body.error.details.length).toBeLessThanOrEqual(20);
    expect(res.body.error.details).toContainEqual({ field: 'items', message: 'must NOT have more than 500 items' });
    expect(res.body.error.detailsIncomplete).toBe(true);
  });

  it('a login body with 80,000 unknown keys (~750 KB) → 400 of under 2 KB, no login needed', async () => {
    const keys = Array.from({ length: 80_000 }, (_, i) => `"k${i}":0`).join(',');
    const body = Buffer.from(`{"email":"a@b.example","password":"x",${keys}}`);
    expect(body.length).toBeGreaterThan(700_000);
    expect(body.length).toBeLessThan(server.cfg.bodyLimitBytes);
    const res = await post('/api/auth/login', body, JSON_TYPE);
    expectError(res, 400);
    expect(bytesOf(res)).toBeLessThan(2_000);
    expect(res.body.error.details).toHaveLength(1);
    expect(res.body.error.detailsIncomplete).toBe(true);
  });

  it('a 100 KB unknown key is not echoed back whole', async () => {
    const res = await post('/api/auth/login', json({ email: 'a@b.example', password: 'x', ['k'.repeat(100_000)]: 1 }), JSON_TYPE);
    expectError(res, 400);
    expect(bytesOf(res)).toBeLessThan(2_000);
    expect(res.body.error.details[0].field.length).toBeLessThanOrEqual(201);
  });

  it('small input with many problems: 20 details and detailsOmitted counts the rest; messages unchanged', async () => {
    const res = await post('/api/invoices', json({ type: 'rechnung', items: Array(30).fill({ bogus: 1 }) }), JSON_TYPE, admin);
    expectError(res, 400);
    expect(res.body.error.message).toBe('Body failed validation');
    expect(res.body.error.details).toHaveLength(20);
    // 30 items × (4 required fields + 1 unknown), less the 20 shown
    expect(res.body.error.detailsOmitted).toBeGreaterThanOrEqual(130);
    expect(res.body.error.detailsIncomplete).toBeUndefined();
    // Only missing fields: MISSING_FIELD, whose message names the first 20 and counts the rest.
    const missing = await post('/api/invoices', json({ type: 'rechnung', items: Array(30).fill({}) }), JSON_TYPE, admin);
    expectError(missing, 400, 'MISSING_FIELD');
    expect(missing.body.error.message).toMatch(/^Missing required field: items\.0\.description, .* and \d+ more$/);
    expect(missing.body.error.details).toHaveLength(20);
    expect(missing.raw.length).toBeLessThan(4_000);
    // Normal bad input: the whole list, no extra fields.
    const one = await post('/api/customers', json({ name: 'x', bogus: 1 }), JSON_TYPE, admin);
    expect(one.body.error).toEqual({
      message: 'Body failed validation',
      code: 'INVALID_INPUT',
      status: 400,
      details: [{ field: 'bogus', message: 'is not an allowed property' }],
    });
  });

  it('four hostile requests at once do not keep /health waiting (bounded, generous)', async () => {
    const body = Buffer.from(`{"type":"rechnung","items":[${Array(100_000).fill('{}').join(',')}]}`);
    const hostile = Array.from({ length: 4 }, () => post('/api/invoices', body, JSON_TYPE, admin));
    const health = await anon.get('/health');
    expect(health.status).toBe(200);
    for (const res of await Promise.all(hostile)) expect(res.status).toBe(400);
  });
});

describe('property: random bytes, encodings and nesting on every route', () => {
  const routes = allRoutes();
  const deep = (depth: number, kind: 'object' | 'array') =>
    kind === 'object' ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : '['.repeat(depth) + ']'.repeat(depth);

  const payload = fc.oneof(
    fc.uint8Array({ maxLength: 2_000 }).map((a) => Buffer.from(a)),
    fc.constantFrom('{}', '[]', '{"name":"x"}', '', 'null', '{"items":[{}]}').map((s) => Buffer.from(s)),
    fc.tuple(fc.integer({ min: 10, max: 5_000 }), fc.constantFrom('object' as const, 'array' as const)).map(([d, k]) => Buffer.from(deep(d, k))),
  );
  const encoding = fc.constantFrom(
    undefined,
    'gzip',
    'deflate',
    'br',
    'identity',
    'GZIP',
    'x-gzip',
    'foo',
    'gzip, br',
    'br, gzip',
    'gzip, gzip',
    'compress',
    '',
    ' , ',
  );
  const transform = fc.constantFrom('encode', 'encode-truncated', 'raw', 'garbage');
  const contentType = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/octet-stream', undefined);

  function encode(body: Buffer, enc: string | undefined, how: string): Buffer {
    if (how === 'raw' || !enc) return body;
    if (how === 'garbage') return Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), body]);
    const codings = enc
      .toLowerCase()
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean);
    let out = body;
    for (const c of codings) {
      if (c === 'gzip' || c === 'x-gzip') out = gzipSync(out);
      else if (c === 'deflate') out = deflateSync(out);
      else if (c === 'br') out = brotliCompressSync(out);
    }
    return how === 'encode-truncated' ? out.subarray(0, Math.max(1, Math.floor(out.length / 2))) : out;
  }

  const pathOf = (route: RegisteredRoute) => route.fullPath.replace(/:([A-Za-z_]+)/g, (_, n: string) => encodeURIComponent(FIXED_PARAMS[n] ?? randomUUID()));

  it('never a 5xx, always the envelope (300 requests, fixed seed)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: routes.length - 1 }), payload, encoding, transform, contentType, async (i, body, enc, how, type) => {
        const route = routes[i];
        const method = route.method.toUpperCase();
        const headers: Record<string, string> = {};
        if (route.auth !== 'public') headers.authorization = `Bearer ${adminToken}`;
        if (enc !== undefined) headers['content-encoding'] = enc;
        if (type) headers['content-type'] = type;
        const sent = method === 'GET' ? undefined : encode(body, enc, how);
        const res = await fetch(server.url + pathOf(route), { method, headers, body: sent, redirect: 'manual', signal: AbortSignal.timeout(30_000) });
        const raw = Buffer.from(await res.arrayBuffer());
        const where = `${routeName(route)} enc=${String(enc)} ${how} type=${String(type)} body=${body.subarray(0, 80).toString('latin1')}: ${res.status} ${raw.subarray(0, 300).toString()}`;
        expect(res.status, where).toBeLessThan(500);
        if (res.status >= 400) {
          const parsed: HttpResponse = { status: res.status, headers: res.headers, body: JSON.parse(raw.toString() || 'null'), raw };
          expect(envelopeProblem(parsed), where).toBeNull();
        }
      }),
      { numRuns: 300, seed: 3232 },
    );
  }, 180_000);
});
