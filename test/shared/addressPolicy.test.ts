import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusedAddressReason } from '../../shared/net/addressPolicy';
import { checkedLookup, guardedPost, refusedUrlReason, TargetRefusedError } from '../../shared/net/guardedRequest';
import { MAX_RETRY_DELAY_MS, RETRY_WINDOW_MS, retryDelayMs } from '../../shared/domain/outboundWebhooks';

/** The SSRF rules (docs/outbound-webhooks.md, "SSRF rules") and the guarded request's limits. */
describe('refusedAddressReason', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.5.4',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '198.18.0.1',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '::127.0.0.1',
    '64:ff9b::10.0.0.1',
    '2001:db8::1',
    'not-an-ip',
  ])('refuses %s', (ip) => {
    expect(refusedAddressReason(ip)).not.toBeNull();
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '169.255.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
  ])('allows the public address %s', (ip) => {
    expect(refusedAddressReason(ip)).toBeNull();
  });
});

describe('refusedUrlReason', () => {
  const policy = { allowTargets: ['127.0.0.1:8080', 'hooks.intranet:80', '::1:9000'] };
  it.each([
    ['https://hooks.example.com/x', null],
    ['https://hooks.example.com:8443/x', null],
    ['http://127.0.0.1:8080/x', null],
    ['http://hooks.intranet/x', null],
    ['http://[::1]:9000/x', null],
    ['http://127.0.0.1:8081/x', /https/],
    ['https://127.0.0.1:8081/x', /non-public/],
    ['http://hooks.example.com/x', /https/],
    ['ftp://hooks.example.com/x', /https/],
    ['https://a:b@hooks.example.com/x', /credentials/],
    ['https://[::ffff:169.254.169.254]/x', /non-public/],
    ['https://LOCALHOST/x', /localhost/],
    ['https://api.localhost/x', /localhost/],
    ['::', /valid URL/],
  ])('%s → %s', (url, expected) => {
    const reason = refusedUrlReason(url, policy);
    if (expected === null) expect(reason).toBeNull();
    else expect(reason).toMatch(expected);
  });
});

describe('guardedPost', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/big') {
          res.writeHead(200);
          res.end('x'.repeat(200_000));
        } else if (req.url === '/never') {
          // no answer
        } else {
          res.writeHead(201, { 'content-type': 'text/plain' });
          res.end(`got ${req.headers['x-test']}`);
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const post = (path: string, opts: { timeoutMs?: number; allow?: boolean } = {}) =>
    guardedPost(
      `http://127.0.0.1:${port}${path}`,
      { headers: { 'x-test': 'yes' }, body: '{}', timeoutMs: opts.timeoutMs ?? 5000, maxBodyBytes: 64 * 1024 },
      { allowTargets: opts.allow === false ? [] : [`127.0.0.1:${port}`] },
    );

  it('posts to an allow-listed target and reads its answer', async () => {
    expect(await post('/ok')).toEqual({ statusCode: 201, body: 'got yes', bodyTruncated: false, location: null });
  });

  it('reads at most the limit of a long answer', async () => {
    const res = await post('/big');
    expect(res).toMatchObject({ statusCode: 200, body: '', bodyTruncated: true });
  });

  it('gives up a receiver that does not answer in time', async () => {
    await expect(post('/never', { timeoutMs: 300 })).rejects.toThrow(/no complete answer within 300 ms/);
  });

  it('refuses a target that is not allow-listed, without connecting', async () => {
    await expect(post('/ok', { allow: false })).rejects.toBeInstanceOf(TargetRefusedError);
  });

  it('refuses a name that resolves to loopback (the system resolver: localhost. is not caught by the URL check)', async () => {
    const err = await guardedPost(
      `https://localhost.:${port}/ok`,
      { headers: {}, body: '{}', timeoutMs: 2000, maxBodyBytes: 1024 },
      { allowTargets: [] },
    ).catch((e) => e);
    // Either the resolver finds loopback and the guard refuses it, or the name does not resolve here: never a connection.
    expect(err).toBeInstanceOf(Error);
    if (err instanceof TargetRefusedError) expect(err.message).toMatch(/127\.0\.0\.1|::1/);
    else expect((err as { code?: string }).code).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });
});

describe('retryDelayMs', () => {
  it('doubles from the base, with jitter in the upper half, capped, and never past the window', () => {
    expect(retryDelayMs(1, 0, 60_000, 0)).toBe(30_000);
    expect(retryDelayMs(1, 0, 60_000, 1)).toBe(60_000);
    expect(retryDelayMs(4, 0, 60_000, 1)).toBe(480_000);
    expect(retryDelayMs(30, 0, 60_000, 1)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(30, RETRY_WINDOW_MS - 5_000, 60_000, 1)).toBe(5_000);
    expect(retryDelayMs(3, RETRY_WINDOW_MS + 1, 60_000, 0.5)).toBe(0);
    // The default schedule ends within the window in some 15 attempts.
    let age = 0;
    let attempts = 1;
    while (age < RETRY_WINDOW_MS) {
      age += retryDelayMs(attempts, age, 60_000, 1);
      attempts++;
    }
    expect(age).toBe(RETRY_WINDOW_MS);
    expect(attempts).toBeLessThan(40);
  });
});

describe('checkedLookup (the lookup a guarded connection uses)', () => {
  const realLookup = dns.lookup;
  const answers: Record<string, { address: string; family: number }[]> = {
    'public.test': [
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ],
    'mixed.test': [
      { address: '93.184.215.14', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ],
  };
  beforeAll(() => {
    (dns as { lookup: unknown }).lookup = (host: string, _opts: unknown, cb: (err: Error | null, a?: unknown) => void) =>
      answers[host] ? cb(null, answers[host]) : cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
  });
  afterAll(() => {
    (dns as { lookup: unknown }).lookup = realLookup;
  });
  const run = (host: string, all: boolean) =>
    new Promise<{ err: Error | null; rest: unknown[] }>((resolve) =>
      (checkedLookup() as unknown as (h: string, o: object, cb: (err: Error | null, ...rest: unknown[]) => void) => void)(host, { all }, (err, ...rest) =>
        resolve({ err, rest }),
      ),
    );

  it('hands the connection exactly the checked addresses, in both callback forms', async () => {
    expect(await run('public.test', true)).toEqual({ err: null, rest: [answers['public.test']] });
    expect(await run('public.test', false)).toEqual({ err: null, rest: ['93.184.215.14', 4] });
  });

  it('refuses a name when any of its addresses is not public, and passes DNS errors on', async () => {
    const mixed = await run('mixed.test', true);
    expect(mixed.err).toBeInstanceOf(TargetRefusedError);
    expect(mixed.err!.message).toContain('10.0.0.5');
    expect((await run('nowhere.test', false)).err).toMatchObject({ code: 'ENOTFOUND' });
  });
});
