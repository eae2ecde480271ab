import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';

/**
 * A local stand-in for the FinanzOnline session + fileupload SOAP services (127.0.0.1, random
 * port). It checks credentials, hands out session ids, records uploads so tests can assert what
 * arrived, and can be told to misbehave:
 *   fake.failNext(2, 503)          next 2 requests answer HTTP 503
 *   fake.rejectNextUpload(-4, 'x') next upload answers rc -4 with msg 'x'
 *   fake.expireSessions()          every current session becomes invalid (rc -1)
 *   fake.delayNext(1, 2000)        next request answers after 2 s (timeouts)
 *   fake.maintenanceNext(1)        next request answers the HTML maintenance page
 *   fake.takeThenFailNextUpload(504)  next upload is taken (recorded, as filed), then a gateway
 *                                  in front answers 504 (text/plain; { html: true }: an HTML page)
 * Responses are shaped like the WSDL's (namespace-qualified loginResponse etc.).
 */
export interface FakeUser {
  tid: string;
  benid: string;
  pin: string;
}

export interface RecordedUpload {
  tid: string;
  benid: string;
  sessionId: string;
  art: string;
  uebermittlung: string;
  data: string;
}

export interface RecordedRequest {
  path: string;
  soapAction: string;
  contentType: string;
  body: string;
}

export interface FakeFinanzOnline {
  url: string;
  sessionUrl: string;
  fileUploadUrl: string;
  uploads: RecordedUpload[];
  requests: RecordedRequest[];
  sessions: Map<string, { tid: string; benid: string }>;
  loggedOut: string[];
  failNext(count: number, status?: number): void;
  rejectNextUpload(rc: number, msg: string): void;
  expireSessions(): void;
  delayNext(count: number, ms: number): void;
  maintenanceNext(count: number): void;
  takeThenFailNextUpload(status: number, opts?: { html?: boolean }): void;
  close(): Promise<void>;
}

const SES = 'https://finanzonline.bmf.gv.at/fon/ws/session';
const FIL = 'https://finanzonline.bmf.gv.at/fon/ws/fileupload';

const parser = new XMLParser({ removeNSPrefix: true, parseTagValue: false, ignoreAttributes: true, trimValues: false });

const soap = (inner: string) =>
  '<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>' +
  inner +
  '</soapenv:Body></soapenv:Envelope>';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const fault = (code: string, text: string) =>
  soap(`<soapenv:Fault><faultcode>soapenv:${code}</faultcode><faultstring>${esc(text)}</faultstring></soapenv:Fault>`);

export async function startFakeFinanzOnline(opts: { users?: FakeUser[] } = {}): Promise<FakeFinanzOnline> {
  const users = opts.users ?? [{ tid: '123456789012', benid: 'WEBSRV01', pin: 'secret-pin' }];
  const sessions = new Map<string, { tid: string; benid: string }>();
  const uploads: RecordedUpload[] = [];
  const requests: RecordedRequest[] = [];
  const loggedOut: string[] = [];
  let failCount = 0;
  let failStatus = 503;
  let delayCount = 0;
  let delayMs = 0;
  let maintenanceCount = 0;
  let uploadRejection: { rc: number; msg: string } | undefined;
  let takenThenFailed: { status: number; html: boolean } | undefined;

  const send = (res: ServerResponse, status: number, body: string, contentType = 'text/xml; charset=utf-8') => {
    if (res.destroyed) return;
    res.writeHead(status, { 'Content-Type': contentType });
    res.end(body);
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const soapAction = String(req.headers.soapaction ?? '').replace(/"/g, '');
    requests.push({ path: req.url ?? '', soapAction, contentType: String(req.headers['content-type'] ?? ''), body: raw });

    if (maintenanceCount > 0) {
      maintenanceCount--;
      return send(res, 200, '<!DOCTYPE html><html><body>Wartungsarbeiten</body></html>', 'text/html; charset=utf-8');
    }
    if (failCount > 0) {
      failCount--;
      return send(res, failStatus, 'Service Unavailable', 'text/plain');
    }
    if (req.method !== 'POST') return send(res, 405, 'POST only', 'text/plain');

    let body: Record<string, unknown> | undefined;
    try {
      body = (parser.parse(raw) as { Envelope?: { Body?: Record<string, unknown> } }).Envelope?.Body;
    } catch {
      body = undefined;
    }
    if (!body) return send(res, 500, fault('Client', 'Malformed SOAP message'));
    const s = (v: unknown) => (typeof v === 'string' ? v : '');

    if (req.url === '/fonws/ws/session') {
      if (soapAction === 'login' && body.loginRequest) {
        const r = body.loginRequest as Record<string, unknown>;
        if (!/^[0-9A-Za-z]{10,24}$/.test(s(r.herstellerid))) return send(res, 500, fault('Client', 'herstellerid invalid'));
        const user = users.find((u) => u.tid === s(r.tid) && u.benid === s(r.benid));
        if (!user || user.pin !== s(r.pin)) {
          return send(
            res,
            200,
            soap(
              `<ns:loginResponse xmlns:ns="${SES}"><ns:id></ns:id><ns:rc>-4</ns:rc><ns:msg>Die Anmeldedaten sind nicht korrekt.</ns:msg></ns:loginResponse>`,
            ),
          );
        }
        const id = randomBytes(12).toString('hex').toUpperCase().slice(0, 20);
        sessions.set(id, { tid: user.tid, benid: user.benid });
        return send(res, 200, soap(`<ns:loginResponse xmlns:ns="${SES}"><ns:id>${id}</ns:id><ns:rc>0</ns:rc></ns:loginResponse>`));
      }
      if (soapAction === 'logout' && body.logoutRequest) {
        const r = body.logoutRequest as Record<string, unknown>;
        const id = s(r.id);
        const known = sessions.get(id);
        if (!known || known.tid !== s(r.tid) || known.benid !== s(r.benid)) {
          return send(res, 200, soap(`<ns:logoutResponse xmlns:ns="${SES}"><ns:rc>-1</ns:rc><ns:msg>Session ungültig</ns:msg></ns:logoutResponse>`));
        }
        sessions.delete(id);
        loggedOut.push(id);
        return send(res, 200, soap(`<ns:logoutResponse xmlns:ns="${SES}"><ns:rc>0</ns:rc></ns:logoutResponse>`));
      }
      return send(res, 500, fault('Client', `Unknown operation ${soapAction}`));
    }

    if (req.url === '/fon/ws/fileupload') {
      if (soapAction !== 'upload' || !body.fileuploadRequest) return send(res, 500, fault('Client', `Unknown operation ${soapAction}`));
      const r = body.fileuploadRequest as Record<string, unknown>;
      const respond = (rc: number, msg: string) =>
        send(res, 200, soap(`<ns:fileuploadResponse xmlns:ns="${FIL}"><ns:rc>${rc}</ns:rc><ns:msg>${esc(msg)}</ns:msg></ns:fileuploadResponse>`));
      const known = sessions.get(s(r.id));
      if (!known || known.tid !== s(r.tid) || known.benid !== s(r.benid)) return respond(-1, 'Session ungültig oder abgelaufen');
      if (!['T', 'P'].includes(s(r.uebermittlung))) return send(res, 500, fault('Client', 'uebermittlung must be T or P'));
      if (uploadRejection) {
        const { rc, msg } = uploadRejection;
        uploadRejection = undefined;
        return respond(rc, msg);
      }
      uploads.push({ tid: s(r.tid), benid: s(r.benid), sessionId: s(r.id), art: s(r.art), uebermittlung: s(r.uebermittlung), data: s(r.data) });
      if (takenThenFailed) {
        const { status, html } = takenThenFailed;
        takenThenFailed = undefined;
        return html
          ? send(res, status, '<!DOCTYPE html><html><body><h1>Bad Gateway</h1></body></html>', 'text/html; charset=utf-8')
          : send(res, status, 'Gateway Timeout', 'text/plain');
      }
      return respond(0, s(r.uebermittlung) === 'T' ? 'Testübermittlung OK' : '');
    }
    return send(res, 404, 'Not found', 'text/plain');
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      if (delayCount > 0) {
        delayCount--;
        const t = setTimeout(() => handle(req, res, raw), delayMs);
        res.on('close', () => clearTimeout(t));
        return;
      }
      handle(req, res, raw);
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    sessionUrl: `${url}/fonws/ws/session`,
    fileUploadUrl: `${url}/fon/ws/fileupload`,
    uploads,
    requests,
    sessions,
    loggedOut,
    failNext(count, status = 503) {
      failCount = count;
      failStatus = status;
    },
    rejectNextUpload(rc, msg) {
      uploadRejection = { rc, msg };
    },
    takeThenFailNextUpload(status, opts = {}) {
      takenThenFailed = { status, html: opts.html ?? false };
    },
    expireSessions() {
      sessions.clear();
    },
    delayNext(count, ms) {
      delayCount = count;
      delayMs = ms;
    },
    maintenanceNext(count) {
      maintenanceCount = count;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
