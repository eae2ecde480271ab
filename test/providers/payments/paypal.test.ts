import { X509Certificate } from 'node:crypto';
import * as zlib from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProviderUnavailableError } from '../../../shared/providers/payments/errors';
import { clearPaypalCertCache, crc32, isAllowedCertUrl, paypalAdapter, paypalSignedString } from '../../../shared/providers/payments/paypal';
import { DEFAULT_PAYMENT_PROVIDER_CONFIG, type NormalizedEvent, type VerifyContext } from '../../../shared/providers/payments/types';
import { createPaypalTestCert, signPaypalDelivery, startCertServer, type CertServer, type PaypalTestCert } from '../../helpers/paypalCerts';
import { needsOfficialFiles } from '../../helpers/officialFiles';
import { paypalCaptureEvent, paypalRefundEvent } from '../../helpers/providerEvents';
import { expectSignatureError, fixtureBytes, fixtureJson, providerFixtures, testConfig } from './support';

/** PayPal's published sample and the recorded 2024 simulator deliveries (FIXTURES_DIR/providers/paypal): the mapping tests parse them. */
const official = needsOfficialFiles(
  providerFixtures(
    'paypal/PAYMENT.CAPTURE.COMPLETED.json',
    'paypal/simulator-2024/PAYMENT.CAPTURE.COMPLETED.body.json',
    'paypal/simulator-2024/PAYMENT.CAPTURE.COMPLETED.headers.json',
    'paypal/simulator-2024/PAYMENT.CAPTURE.REFUNDED.body.json',
  ),
);

const WEBHOOK_ID = '8PT597110X687430LKGECATA';
let cert: PaypalTestCert;
let server: CertServer;
let now: Date;

beforeAll(async () => {
  cert = createPaypalTestCert();
  server = await startCertServer(cert.certPem);
  // Inside the certificate's validity, whatever day the suite runs.
  now = new Date(Date.parse(new X509Certificate(cert.certPem).validFrom) + 3600_000);
});
afterAll(() => server.close());
beforeEach(() => {
  clearPaypalCertCache();
  server.hits.clear();
});

const ctx = (over: Partial<VerifyContext> = {}): VerifyContext => ({
  secrets: { webhookId: WEBHOOK_ID },
  config: testConfig({ paypalCertHostAllowList: [...DEFAULT_PAYMENT_PROVIDER_CONFIG.paypalCertHostAllowList, server.origin] }),
  now,
  ...over,
});
/** Signed at `at` (default: the test clock `now`), as PayPal signs its transmission time. */
const delivery = (rawBody: Buffer, over: { webhookId?: string; certUrl?: string; at?: Date; transmissionTime?: string } = {}) => ({
  rawBody,
  headers: signPaypalDelivery(cert, {
    rawBody,
    webhookId: over.webhookId ?? WEBHOOK_ID,
    certUrl: over.certUrl ?? server.certUrl,
    transmissionTime: over.transmissionTime ?? (over.at ?? now).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  }),
});

// The recorded deliveries' raw bytes, for the tests that skip without them.
const completedRaw = official ? fixtureBytes('paypal/simulator-2024/PAYMENT.CAPTURE.COMPLETED.body.json') : Buffer.alloc(0);
const refundedRaw = official ? fixtureBytes('paypal/simulator-2024/PAYMENT.CAPTURE.REFUNDED.body.json') : Buffer.alloc(0);
// Our own deliveries for the signature checks: compact JSON, as PayPal sends it.
const captureBody = Buffer.from(JSON.stringify(paypalCaptureEvent()));
const refundBody = Buffer.from(JSON.stringify(paypalRefundEvent('CAPTEST0001')));

describe('paypal: CRC32 and the signed string', () => {
  it('crc32 is the IEEE CRC as an unsigned decimal', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(crc32(Buffer.alloc(0))).toBe(0);
    // Values with the top bit set must not come out negative.
    const body = captureBody;
    expect(crc32(body)).toBeGreaterThanOrEqual(0);
    if (typeof (zlib as { crc32?: (b: Buffer) => number }).crc32 === 'function') {
      expect(crc32(body)).toBe((zlib as unknown as { crc32: (b: Buffer) => number }).crc32(body));
      expect(crc32(refundBody)).toBe((zlib as unknown as { crc32: (b: Buffer) => number }).crc32(refundBody));
    }
  });

  it('signed string is id|time|webhookId|crc', () => {
    expect(paypalSignedString('tid', '2024-08-02T19:33:35Z', 'WH1', Buffer.from('123456789'))).toBe('tid|2024-08-02T19:33:35Z|WH1|3421780262');
  });

  it.skipIf(!official)('the real simulator bodies have the recorded byte length (raw bytes preserved)', () => {
    const h = fixtureJson('paypal/simulator-2024/PAYMENT.CAPTURE.COMPLETED.headers.json');
    expect(completedRaw.length).toBe(Number(h['content-length']));
    expect(Buffer.from(h['paypal-transmission-sig'], 'base64').length).toBe(256);
  });
});

describe.skipIf(!official)('paypal: mapping the fixture events (signed with a test certificate)', () => {
  it('PAYMENT.CAPTURE.COMPLETED (2024 simulator delivery) → payment keyed by capture id', async () => {
    const event = await paypalAdapter.verifyAndParse(delivery(completedRaw), ctx());
    expect(event).toEqual<NormalizedEvent>({
      provider: 'paypal',
      eventId: 'WH-58D329510W468432D-8HN650336L201105X',
      eventType: 'PAYMENT.CAPTURE.COMPLETED',
      kind: 'payment',
      externalId: '12A34567BC123456S',
      amount: '30.00',
      currency: 'USD',
      date: '2022-08-23',
      occurredAt: '2022-08-23T18:29:50.000Z',
      // platform_fees[].payee.merchant_id (ABCDEFGHIJKL1) is the platform, not the counterparty.
      counterparty: { name: null, email: null, merchantId: null, country: null, vatId: null, iban: null },
      description: 'Payment completed for $ 30.0 USD',
      reference: '5840243-146',
    });
  });

  it('PAYMENT.CAPTURE.REFUNDED → refund keyed by refund id, original capture from links[rel=up]', async () => {
    const event = await paypalAdapter.verifyAndParse(delivery(refundedRaw), ctx());
    expect(event).toEqual<NormalizedEvent>({
      provider: 'paypal',
      eventId: 'WH-1GE84257G0350133W-6RW800890C634293G',
      eventType: 'PAYMENT.CAPTURE.REFUNDED',
      kind: 'refund',
      externalId: '1Y107995YT783435V',
      originalExternalId: '0JF852973C016714D',
      amount: '0.99',
      currency: 'USD',
      date: '2018-08-15', // 12:13:29-07:00 is 19:13:29 UTC
      occurredAt: '2018-08-15T19:13:29.000Z',
      counterparty: { name: null, email: null, merchantId: null, country: null, vatId: null, iban: null },
      description: 'A $ 0.99 USD capture payment was refunded',
      reference: null,
    });
  });

  it('the pretty-printed standard sample maps too; rel=up to an authorization is not a capture', async () => {
    const event = await paypalAdapter.verifyAndParse(delivery(fixtureBytes('paypal/PAYMENT.CAPTURE.COMPLETED.json')), ctx());
    expect([event.externalId, event.amount, event.currency, event.date, event.kind]).toEqual(['27M47624FP291604U', '2.51', 'USD', '2019-02-14', 'payment']);
    expect(event.originalExternalId).toBeUndefined();
  });

  it('payee merchant id, payer e-mail, name and country are mapped when present', async () => {
    const body = fixtureJson('paypal/simulator-2024/PAYMENT.CAPTURE.COMPLETED.body.json');
    body.resource.payee = { merchant_id: 'ZL8PDZ5FMTSCY', email_address: 'merchant@example.com' };
    body.resource.payer = { email_address: 'buyer@example.de', name: { given_name: 'Anna', surname: 'Muster' }, address: { country_code: 'DE' } };
    const event = await paypalAdapter.verifyAndParse(delivery(Buffer.from(JSON.stringify(body))), ctx());
    expect(event.counterparty).toEqual({ name: 'Anna Muster', email: 'buyer@example.de', merchantId: 'ZL8PDZ5FMTSCY', country: 'DE', vatId: null, iban: null });
  });

  it('a refund without an up link falls back to supplementary_data, else null', async () => {
    const body = fixtureJson('paypal/simulator-2024/PAYMENT.CAPTURE.REFUNDED.body.json');
    body.resource.links = body.resource.links.filter((l: { rel: string }) => l.rel !== 'up');
    body.resource.supplementary_data = { related_ids: { capture_id: '0JF852973C016714D' } };
    expect((await paypalAdapter.verifyAndParse(delivery(Buffer.from(JSON.stringify(body))), ctx())).originalExternalId).toBe('0JF852973C016714D');
    delete body.resource.supplementary_data;
    expect((await paypalAdapter.verifyAndParse(delivery(Buffer.from(JSON.stringify(body))), ctx())).originalExternalId).toBeNull();
  });

  it('JPY values without decimals are formatted, other events ignored', async () => {
    const body = fixtureJson('paypal/simulator-2024/PAYMENT.CAPTURE.COMPLETED.body.json');
    body.resource.amount = { currency_code: 'JPY', value: '3000' };
    expect((await paypalAdapter.verifyAndParse(delivery(Buffer.from(JSON.stringify(body))), ctx())).amount).toBe('3000.00');
    body.event_type = 'PAYMENT.CAPTURE.PENDING';
    const ignored = await paypalAdapter.verifyAndParse(delivery(Buffer.from(JSON.stringify(body))), ctx());
    expect([ignored.kind, ignored.externalId, ignored.amount]).toEqual(['ignored', null, null]);
  });
});

describe('paypal: signature and certificate', () => {
  it('rejects a tampered body', async () => {
    const req = delivery(captureBody);
    req.rawBody = Buffer.from(captureBody.toString('utf8').replace('"value":"2.51"', '"value":"9.51"'));
    await expectSignatureError(paypalAdapter.verifyAndParse(req, ctx()), 'mismatch');
  });

  it('rejects a signature made for another webhook id', async () => {
    await expectSignatureError(paypalAdapter.verifyAndParse(delivery(captureBody, { webhookId: 'OTHER' }), ctx()), 'mismatch');
  });

  it('rejects a signature by another key', async () => {
    const other = createPaypalTestCert();
    const req = { rawBody: captureBody, headers: signPaypalDelivery(other, { rawBody: captureBody, webhookId: WEBHOOK_ID, certUrl: server.certUrl }) };
    await expectSignatureError(paypalAdapter.verifyAndParse(req, ctx()), 'mismatch');
  });

  it('caches the certificate by URL: two verifications, one download', async () => {
    await paypalAdapter.verifyAndParse(delivery(captureBody), ctx());
    await paypalAdapter.verifyAndParse(delivery(refundBody), ctx());
    expect(server.hits.get('/v1/notifications/certs/CERT-test')).toBe(1);
    // After the TTL (6 h) it is fetched again.
    const later = new Date(now.getTime() + 7 * 3600_000);
    await paypalAdapter.verifyAndParse(delivery(captureBody, { at: later }), ctx({ now: later }));
    expect(server.hits.get('/v1/notifications/certs/CERT-test')).toBe(2);
  });

  it('concurrent verifications share one download', async () => {
    await Promise.all([1, 2, 3].map(() => paypalAdapter.verifyAndParse(delivery(captureBody), ctx())));
    expect(server.hits.get('/v1/notifications/certs/CERT-test')).toBe(1);
  });

  it('never fetches a certificate from an origin that is not allow-listed', async () => {
    const notListed = ctx({ config: testConfig() }); // defaults only: PayPal's hosts
    await expectSignatureError(paypalAdapter.verifyAndParse(delivery(captureBody), notListed), 'untrusted_cert_url');
    for (const certUrl of ['https://evil.example.com/v1/notifications/certs/CERT-test', 'http://api.paypal.com/v1/notifications/certs/x', 'not a url']) {
      await expectSignatureError(paypalAdapter.verifyAndParse(delivery(captureBody, { certUrl }), ctx()), 'untrusted_cert_url');
    }
    expect(server.hits.size).toBe(0);
  });

  it('allow-list: exact origin, https, http only on loopback', () => {
    const list = DEFAULT_PAYMENT_PROVIDER_CONFIG.paypalCertHostAllowList;
    expect(isAllowedCertUrl('https://api.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-1a5f47cb', list)).toBe(true);
    expect(isAllowedCertUrl('https://api.sandbox.paypal.com/v1/notifications/certs/CERT-1', list)).toBe(true);
    expect(isAllowedCertUrl('https://api.paypal.com.evil.com/cert', list)).toBe(false);
    expect(isAllowedCertUrl('https://api.paypal.com@evil.com/cert', list)).toBe(false);
    expect(isAllowedCertUrl('https://user:pw@api.paypal.com/cert', list)).toBe(false);
    expect(isAllowedCertUrl('https://api.paypal.com:8443/cert', list)).toBe(false);
    expect(isAllowedCertUrl('https://www.paypal.com/cert', list)).toBe(false);
    expect(isAllowedCertUrl('http://api.paypal.com/cert', list)).toBe(false);
    expect(isAllowedCertUrl('http://api.paypal.com/cert', ['http://api.paypal.com'])).toBe(false); // http off loopback never
    expect(isAllowedCertUrl('http://127.0.0.1:8080/cert', ['http://127.0.0.1:8080'])).toBe(true);
    expect(isAllowedCertUrl('http://127.0.0.1:8081/cert', ['http://127.0.0.1:8080'])).toBe(false);
    expect(isAllowedCertUrl('ftp://api.paypal.com/cert', list)).toBe(false);
  });

  it.skipIf(!official)(
    "the real 2024 delivery headers: PayPal host allowed, certificate fetched, signature checked (fails without PayPal's webhook id)",
    async () => {
      const headers = fixtureJson<Record<string, string>>('paypal/simulator-2024/PAYMENT.CAPTURE.COMPLETED.headers.json');
      const fetched: string[] = [];
      const fakeFetch = (async (url: string | URL | Request) => {
        fetched.push(String(url));
        return new Response(cert.certPem, { status: 200 });
      }) as typeof fetch;
      await expectSignatureError(paypalAdapter.verifyAndParse({ rawBody: completedRaw, headers }, ctx({ fetch: fakeFetch })), 'mismatch');
      expect(fetched).toEqual(['https://api.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-1a5f47cb']);
    },
  );

  it('rejects an expired or not yet valid certificate', async () => {
    const x = new X509Certificate(cert.certPem);
    const after = new Date(Date.parse(x.validTo) + 86400_000);
    await expectSignatureError(paypalAdapter.verifyAndParse(delivery(captureBody, { at: after }), ctx({ now: after })), 'invalid_certificate');
    const before = new Date(Date.parse(x.validFrom) - 86400_000);
    await expectSignatureError(paypalAdapter.verifyAndParse(delivery(captureBody, { at: before }), ctx({ now: before })), 'invalid_certificate');
  });

  it('replay: a correctly signed transmission more than 300 s from now (either way) is refused', async () => {
    const at = (sec: number) => new Date(now.getTime() + sec * 1000);
    for (const sec of [-300, 300]) {
      await expect(paypalAdapter.verifyAndParse(delivery(captureBody, { at: at(sec) }), ctx())).resolves.toMatchObject({ kind: 'payment' });
    }
    for (const sec of [-301, 301, -3600, -86400 * 365]) {
      await expectSignatureError(paypalAdapter.verifyAndParse(delivery(captureBody, { at: at(sec) }), ctx()), 'timestamp_out_of_tolerance');
    }
    // Offsets and fractions are RFC 3339 too; the same instant written with +02:00 is fresh.
    const local = new Date(now.getTime() + 2 * 3600_000).toISOString().replace(/\.\d{3}Z$/, '.5+02:00');
    await expect(paypalAdapter.verifyAndParse(delivery(captureBody, { transmissionTime: local }), ctx())).resolves.toMatchObject({ kind: 'payment' });
    // The time is signed: moving a stale header into tolerance breaks the signature.
    const stale = delivery(captureBody, { at: at(-3600) });
    const moved = { ...stale.headers, 'paypal-transmission-time': now.toISOString().replace(/\.\d{3}Z$/, 'Z') };
    await expectSignatureError(paypalAdapter.verifyAndParse({ rawBody: captureBody, headers: moved }, ctx()), 'mismatch');
  });

  it('a transmission time that is not RFC 3339 is malformed, refused before any certificate download', async () => {
    for (const transmissionTime of ['yesterday', '1722627215', '2024-08-02 19:33:35Z', '2024-13-45T99:99:99Z']) {
      await expectSignatureError(paypalAdapter.verifyAndParse(delivery(captureBody, { transmissionTime }), ctx()), 'malformed_header');
    }
    expect(server.hits.size).toBe(0);
  });

  it('certificate URL answering 404 or garbage → invalid_certificate; 500 or unreachable → unavailable', async () => {
    server.route('/certs/missing', 404, 'nope');
    server.route('/certs/garbage', 200, 'hello');
    server.route('/certs/down', 503, 'later');
    await expectSignatureError(
      paypalAdapter.verifyAndParse(delivery(captureBody, { certUrl: `${server.origin}/certs/missing` }), ctx()),
      'invalid_certificate',
    );
    await expectSignatureError(
      paypalAdapter.verifyAndParse(delivery(captureBody, { certUrl: `${server.origin}/certs/garbage` }), ctx()),
      'invalid_certificate',
    );
    await expect(paypalAdapter.verifyAndParse(delivery(captureBody, { certUrl: `${server.origin}/certs/down` }), ctx())).rejects.toBeInstanceOf(
      ProviderUnavailableError,
    );
    const unreachable = 'http://127.0.0.1:9/cert';
    const cfg = ctx({ config: testConfig({ paypalCertHostAllowList: ['http://127.0.0.1:9'] }) });
    await expect(paypalAdapter.verifyAndParse(delivery(captureBody, { certUrl: unreachable }), cfg)).rejects.toBeInstanceOf(ProviderUnavailableError);
    // Failures are not cached: the next good delivery still works.
    await expect(paypalAdapter.verifyAndParse(delivery(captureBody), ctx())).resolves.toMatchObject({ kind: 'payment' });
  });

  it('rejects missing headers, a foreign algorithm and a garbled signature', async () => {
    const good = delivery(captureBody);
    for (const name of ['paypal-transmission-id', 'paypal-transmission-time', 'paypal-transmission-sig', 'paypal-cert-url', 'paypal-auth-algo']) {
      const headers = { ...good.headers };
      delete headers[name];
      await expectSignatureError(paypalAdapter.verifyAndParse({ rawBody: captureBody, headers }, ctx()), 'missing_header');
    }
    await expectSignatureError(
      paypalAdapter.verifyAndParse({ rawBody: captureBody, headers: { ...good.headers, 'paypal-auth-algo': 'SHA1withRSA' } }, ctx()),
      'unsupported_algorithm',
    );
    await expectSignatureError(
      paypalAdapter.verifyAndParse({ rawBody: captureBody, headers: { ...good.headers, 'paypal-transmission-sig': 'not base64!' } }, ctx()),
      'malformed_header',
    );
    // Header names are case-insensitive (PayPal documents them upper case, sends them lower case).
    const upper = Object.fromEntries(Object.entries(good.headers).map(([k, v]) => [k.toUpperCase(), v]));
    await expect(paypalAdapter.verifyAndParse({ rawBody: captureBody, headers: upper }, ctx())).resolves.toMatchObject({ kind: 'payment' });
  });

  it('refuses to verify without a webhook id', async () => {
    await expectSignatureError(paypalAdapter.verifyAndParse(delivery(captureBody), ctx({ secrets: {} })), 'not_configured');
  });
});
