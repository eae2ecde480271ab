import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FinanzOnlineClient, PortalError, uploadDataText, type FinanzOnlineLogger } from '../../../shared/providers/finanzonline';
import { buildU30Xml } from '../../../shared/formats/u30/u30Xml';
import { computeU30 } from '../../../shared/domain/tax/u30';
import { monthPeriod } from '../../../shared/domain/tax/period';
import { startFakeFinanzOnline, type FakeFinanzOnline } from '../../helpers/fakeFinanzOnline';

const creds = { tid: '123456789012', benid: 'WEBSRV01', pin: 'secret-pin', herstellerid: 'ATU12345678' };

const u30 = buildU30Xml({
  period: monthPeriod(2026, 8),
  taxNumber: '12-345/6789',
  kennzahlen: computeU30({ salesByRate: [{ taxRate: '20', net: '1000.00' }], reverseChargeEuNet: '0', inputTax: '150.00' }).kennzahlen,
  customerInfo: 'Prüfung',
  createdAt: new Date('2026-09-01T08:00:00Z'),
});

let fake: FakeFinanzOnline;
const logged: unknown[] = [];
const logger: FinanzOnlineLogger = {
  info: (obj, msg) => logged.push({ obj, msg }),
  warn: (obj, msg) => logged.push({ obj, msg }),
};
const client = (timeoutMs = 5_000) => new FinanzOnlineClient({ sessionUrl: fake.sessionUrl, fileUploadUrl: fake.fileUploadUrl, timeoutMs, logger });

async function portalError(p: Promise<unknown>): Promise<PortalError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(PortalError);
    return err as PortalError;
  }
  throw new Error('expected a PortalError');
}

beforeAll(async () => {
  fake = await startFakeFinanzOnline();
});
afterAll(async () => {
  await fake.close();
});
afterEach(() => {
  // Whatever happened, nothing secret reached the logger.
  const text = JSON.stringify(logged);
  for (const secret of [creds.pin, creds.tid, creds.benid]) expect(text).not.toContain(secret);
  for (const id of fake.loggedOut) expect(text).not.toContain(id);
  logged.length = 0;
});

describe('FinanzOnline client against the fake portal', () => {
  it('login, upload (test mode), logout round trip', async () => {
    const c = client();
    const sessionId = await c.login(creds);
    expect(sessionId).toMatch(/^[0-9A-Za-z]{10,24}$/);
    expect(fake.sessions.has(sessionId)).toBe(true);

    const res = await c.upload({ sessionId, tid: creds.tid, benid: creds.benid, art: 'U30', uebermittlung: u30, mode: 'test' });
    expect(res).toEqual({ rc: 0, msg: 'Testübermittlung OK' });
    const up = fake.uploads.at(-1)!;
    expect(up).toMatchObject({ tid: creds.tid, benid: creds.benid, sessionId, art: 'U30', uebermittlung: 'T' });
    // The document arrives as XML text (not base64), characters intact, declaration now UTF-8.
    expect(up.data.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    expect(up.data).toContain('<ERKLAERUNGS_UEBERMITTLUNG>');
    expect(up.data).toContain('<KUNDENINFO>Prüfung</KUNDENINFO>');
    expect(up.data).toBe(uploadDataText(u30));

    await c.logout({ sessionId, tid: creds.tid, benid: creds.benid });
    expect(fake.sessions.has(sessionId)).toBe(false);
    expect(fake.loggedOut).toContain(sessionId);

    // SOAP details as the WSDL says
    const login = fake.requests.find((r) => r.soapAction === 'login')!;
    expect(login.path).toBe('/fonws/ws/session');
    expect(login.contentType).toMatch(/^text\/xml; charset=utf-8/);
    expect(login.body).toContain('xmlns:ses="https://finanzonline.bmf.gv.at/fon/ws/session"');
    expect(fake.requests.find((r) => r.soapAction === 'upload')!.body).toContain('xmlns:fil="https://finanzonline.bmf.gv.at/fon/ws/fileupload"');
  });

  it('live mode sends uebermittlung P; submit() logs out afterwards', async () => {
    const before = fake.loggedOut.length;
    const res = await client().submit({ ...creds, art: 'U30', uebermittlung: u30, mode: 'live' });
    expect(res.rc).toBe(0);
    expect(fake.uploads.at(-1)!.uebermittlung).toBe('P');
    expect(fake.loggedOut.length).toBe(before + 1);
    expect(fake.sessions.size).toBe(0);
  });

  it('bad credentials are a permanent AUTH_FAILED error without the PIN in it', async () => {
    const err = await portalError(client().login({ ...creds, pin: 'wrong-pin-123' }));
    expect(err.transient).toBe(false);
    expect(err.code).toBe('AUTH_FAILED');
    expect(err.rc).toBe(-4);
    const shown = `${err.message} ${err.portalMessage} ${JSON.stringify(err)} ${err.stack}`;
    expect(shown).not.toContain('wrong-pin-123');
    expect(shown).not.toContain(creds.tid);
  });

  it('malformed credentials are refused before anything is sent', async () => {
    const n = fake.requests.length;
    const err = await portalError(client().login({ ...creds, tid: 'x' }));
    expect(err).toMatchObject({ transient: false, code: 'INVALID_REQUEST' });
    expect(err.message).not.toContain('x"');
    expect(fake.requests.length).toBe(n);
  });

  it('HTTP 503 is transient', async () => {
    fake.failNext(1, 503);
    const err = await portalError(client().login(creds));
    expect(err).toMatchObject({ transient: true, code: 'HTTP_ERROR', httpStatus: 503 });
  });

  it('the HTML maintenance page is transient', async () => {
    fake.maintenanceNext(1);
    const err = await portalError(client().login(creds));
    expect(err).toMatchObject({ transient: true, code: 'MAINTENANCE' });
  });

  it('a timeout is transient', async () => {
    fake.delayNext(1, 3_000);
    const err = await portalError(client(200).login(creds));
    expect(err).toMatchObject({ transient: true, code: 'TIMEOUT' });
  });

  it('a refused connection is transient', async () => {
    const c = new FinanzOnlineClient({ sessionUrl: 'http://127.0.0.1:1/session', fileUploadUrl: 'http://127.0.0.1:1/upload', timeoutMs: 2_000 });
    const err = await portalError(c.login(creds));
    expect(err).toMatchObject({ transient: true, code: 'NETWORK' });
  });

  it('a rejected file is permanent and keeps the portal message', async () => {
    fake.rejectNextUpload(-4, 'Zeile 12: Element KZ029 ungültig');
    const err = await portalError(client().submit({ ...creds, art: 'U30', uebermittlung: u30, mode: 'test' }));
    expect(err).toMatchObject({ transient: false, code: 'XML_REJECTED', rc: -4, portalMessage: 'Zeile 12: Element KZ029 ungültig' });
    expect(fake.sessions.size).toBe(0); // logged out even after the failure
  });

  it('an expired session during submit logs in again once and uploads', async () => {
    const uploads = fake.uploads.length;
    fake.rejectNextUpload(-1, 'Session abgelaufen');
    const res = await client().submit({ ...creds, art: 'U30', uebermittlung: u30, mode: 'test' });
    expect(res.rc).toBe(0);
    expect(fake.uploads.length).toBe(uploads + 1);
    expect(fake.requests.filter((r) => r.soapAction === 'login').length).toBeGreaterThanOrEqual(2);
  });

  it('an upload with an unknown session is a transient SESSION_INVALID', async () => {
    const err = await portalError(
      client().upload({ sessionId: 'ABCDEFGHIJ1234', tid: creds.tid, benid: creds.benid, art: 'U30', uebermittlung: u30, mode: 'test' }),
    );
    expect(err).toMatchObject({ transient: true, code: 'SESSION_INVALID', rc: -1 });
  });
});

describe('SOAP faults', () => {
  const faultFetch = (code: string) =>
    (async () =>
      new Response(
        `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><soap:Fault><faultcode>soap:${code}</faultcode><faultstring>boom</faultstring></soap:Fault></soap:Body></soap:Envelope>`,
        { status: 500, headers: { 'content-type': 'text/xml' } },
      )) as typeof fetch;

  it('a Client fault is permanent, a Server fault transient', async () => {
    const mk = (code: string) => new FinanzOnlineClient({ sessionUrl: 'http://fon.invalid/s', fileUploadUrl: 'http://fon.invalid/f', fetch: faultFetch(code) });
    expect(await portalError(mk('Client').login(creds))).toMatchObject({ transient: false, code: 'SOAP_FAULT', httpStatus: 500, portalMessage: 'boom' });
    expect(await portalError(mk('Server').login(creds))).toMatchObject({ transient: true, code: 'SOAP_FAULT' });
  });
});
