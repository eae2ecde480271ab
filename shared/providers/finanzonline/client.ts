import iconv from 'iconv-lite';
import { XMLParser } from 'fast-xml-parser';
import { PortalError, sessionRcError, uploadRcError } from './errors';

/**
 * FinanzOnline SOAP 1.1 client (BMF's sessionService and fileuploadService WSDLs) for login, logout
 * and upload; `uebermittlung` "T" is checked, not filed, "P" is filed. Never logs or puts into
 * errors the PIN, the ids, the session id or the document. Retries are the caller's
 * (PortalError.transient); `submit` re-logs in once on an expired session (docs/tax-reports.md).
 */
export interface FinanzOnlineCredentials {
  /** Teilnehmer-Identifikation. */
  tid: string;
  /** Benutzer-Identifikation of the web service user. */
  benid: string;
  pin: string;
  /** Software vendor's UID (e.g. ATU12345678). */
  herstellerid: string;
}

export type FinanzOnlineArt = 'U30';
export type SubmissionMode = 'test' | 'live';

export interface UploadRequest {
  sessionId: string;
  tid: string;
  benid: string;
  art: FinanzOnlineArt;
  /** The document (e.g. buildU30Xml output); sent as XML text, not base64. */
  uebermittlung: Buffer | string;
  mode: SubmissionMode;
}

export interface UploadResult {
  rc: number;
  /** The portal's msg, verbatim (may be empty). */
  msg: string;
}

export interface FinanzOnlineLogger {
  info(obj: Record<string, unknown>, msg?: string): void;
  warn(obj: Record<string, unknown>, msg?: string): void;
}

export interface FinanzOnlineClientOptions {
  /** Session service endpoint, e.g. https://finanzonline.bmf.gv.at/fonws/ws/session */
  sessionUrl: string;
  /** Fileupload endpoint, e.g. https://finanzonline.bmf.gv.at/fon/ws/fileupload */
  fileUploadUrl: string;
  /** Per-request timeout (connect + response body); default 30 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  logger?: FinanzOnlineLogger;
}

export const SESSION_NS = 'https://finanzonline.bmf.gv.at/fon/ws/session';
export const FILEUPLOAD_NS = 'https://finanzonline.bmf.gv.at/fon/ws/fileupload';
const SOAP_ENV = 'http://schemas.xmlsoap.org/soap/envelope/';

const parser = new XMLParser({ removeNSPrefix: true, parseTagValue: false, ignoreAttributes: true, trimValues: true });

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&apos;'));
}

function envelope(prefix: string, ns: string, body: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<soapenv:Envelope xmlns:soapenv="${SOAP_ENV}" xmlns:${prefix}="${ns}">` +
    `<soapenv:Header/><soapenv:Body>${body}</soapenv:Body></soapenv:Envelope>`
  );
}

const el = (prefix: string, name: string, value: string) => `<${prefix}:${name}>${esc(value)}</${prefix}:${name}>`;

/** Field checks from session.xsd / fileupload.xsd, so a typo fails here and not as a SOAP fault. */
function checkField(name: string, value: unknown, re: RegExp): string {
  if (typeof value !== 'string' || !re.test(value)) {
    throw new PortalError(`FinanzOnline ${name} has an invalid format`, { transient: false, code: 'INVALID_REQUEST' });
  }
  return value;
}
/**
 * What stored credentials must match to pass every call they are used in: login and logout
 * (session.xsd) and upload (fileupload.xsd) each restrict them differently (tid 8–12 for login but
 * at least 9 for upload, benid alphanumeric on logout), so the settings check their intersection
 * and a credential that would only fail at the upload is refused when it is entered.
 */
export const CREDENTIAL_PATTERNS = {
  tid: '^[0-9A-Za-z]{9,12}$',
  benid: '^[0-9A-Za-z]{5,12}$',
  pin: '^[\\s\\S]{5,128}$',
  herstellerid: '^[0-9A-Za-z]{10,24}$',
} as const;

const TID_RE = /^[0-9A-Za-z]{8,12}$/;
const BENID_RE = /^[^\s]{5,12}$/;
const PIN_RE = /^[\s\S]{5,128}$/;
const HERSTELLER_RE = /^[0-9A-Za-z]{10,24}$/;
const SESSION_RE = /^[0-9A-Za-z]{10,24}$/;

/**
 * The document as text for <data>. The BMF file is ISO-8859-1 bytes; inside the UTF-8 SOAP
 * message it travels as characters, so it is decoded with its declared charset and its XML
 * declaration is rewritten to say UTF-8 (a text claiming iso-8859-1 inside a UTF-8 envelope would
 * be decoded twice by a careful receiver).
 */
export function uploadDataText(doc: Buffer | string): string {
  let text: string;
  if (typeof doc === 'string') {
    text = doc;
  } else {
    const head = doc.subarray(0, 200).toString('latin1');
    const m = /^(?:\xEF\xBB\xBF)?<\?xml[^?]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head);
    const charset = m ? m[1].toLowerCase() : 'utf-8';
    if (!iconv.encodingExists(charset)) {
      throw new PortalError(`Upload document has an unknown encoding ${charset}`, { transient: false, code: 'INVALID_REQUEST' });
    }
    text = iconv.decode(doc, charset);
  }
  text = text.replace(/^\uFEFF/, '');
  return text.replace(/^<\?xml([^?]*?)encoding\s*=\s*["'][^"']*["']/, '<?xml$1encoding="UTF-8"');
}

type Op = 'login' | 'logout' | 'upload';

export class FinanzOnlineClient {
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;

  constructor(private readonly opts: FinanzOnlineClientOptions) {
    this.fetchImpl = opts.fetch ?? fetch;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** Logs in a web service user; returns the session id. */
  async login(c: FinanzOnlineCredentials, signal?: AbortSignal): Promise<string> {
    const body =
      '<ses:loginRequest>' +
      el('ses', 'tid', checkField('tid', c.tid, TID_RE)) +
      el('ses', 'benid', checkField('benid', c.benid, BENID_RE)) +
      el('ses', 'pin', checkField('pin', c.pin, PIN_RE)) +
      el('ses', 'herstellerid', checkField('herstellerid', c.herstellerid, HERSTELLER_RE)) +
      '</ses:loginRequest>';
    const res = await this.call('login', this.opts.sessionUrl, envelope('ses', SESSION_NS, body), 'loginResponse', signal);
    const rc = this.rcOf(res, 'login');
    if (rc !== 0) throw sessionRcError(rc, text(res.msg));
    const id = text(res.id);
    if (!id) throw new PortalError('FinanzOnline login answered rc 0 without a session id', { transient: true, code: 'BAD_RESPONSE' });
    return id;
  }

  async logout(p: { sessionId: string; tid: string; benid: string }, signal?: AbortSignal): Promise<void> {
    const body =
      '<ses:logoutRequest>' +
      el('ses', 'tid', checkField('tid', p.tid, TID_RE)) +
      el('ses', 'benid', checkField('benid', p.benid, BENID_RE)) +
      el('ses', 'id', checkField('session id', p.sessionId, SESSION_RE)) +
      '</ses:logoutRequest>';
    const res = await this.call('logout', this.opts.sessionUrl, envelope('ses', SESSION_NS, body), 'logoutResponse', signal);
    const rc = this.rcOf(res, 'logout');
    if (rc !== 0) throw sessionRcError(rc, text(res.msg));
  }

  /** Uploads one document; resolves on rc 0 (accepted for processing, not yet assessed). */
  async upload(p: UploadRequest, signal?: AbortSignal): Promise<UploadResult> {
    if (p.mode !== 'test' && p.mode !== 'live') throw new PortalError('mode must be test or live', { transient: false, code: 'INVALID_REQUEST' });
    if (p.art !== 'U30') throw new PortalError('art must be U30', { transient: false, code: 'INVALID_REQUEST' });
    const body =
      '<fil:fileuploadRequest>' +
      el('fil', 'tid', checkField('tid', p.tid, /^[0-9A-Za-z]{9,12}$/)) +
      el('fil', 'benid', checkField('benid', p.benid, BENID_RE)) +
      el('fil', 'id', checkField('session id', p.sessionId, SESSION_RE)) +
      el('fil', 'art', p.art) +
      el('fil', 'uebermittlung', p.mode === 'live' ? 'P' : 'T') +
      el('fil', 'data', uploadDataText(p.uebermittlung)) +
      '</fil:fileuploadRequest>';
    const res = await this.call('upload', this.opts.fileUploadUrl, envelope('fil', FILEUPLOAD_NS, body), 'fileuploadResponse', signal);
    const rc = this.rcOf(res, 'upload');
    const msg = text(res.msg) ?? '';
    if (rc !== 0) throw uploadRcError(rc, msg);
    return { rc, msg };
  }

  /**
   * login → upload → logout. On rc -1 (session expired) during upload it logs in once more and
   * retries; logout failures are logged and ignored (the session expires on its own).
   */
  async submit(
    p: FinanzOnlineCredentials & { art: FinanzOnlineArt; uebermittlung: Buffer | string; mode: SubmissionMode },
    signal?: AbortSignal,
  ): Promise<UploadResult> {
    let sessionId = await this.login(p, signal);
    try {
      try {
        return await this.upload({ sessionId, tid: p.tid, benid: p.benid, art: p.art, uebermittlung: p.uebermittlung, mode: p.mode }, signal);
      } catch (err) {
        if (!(err instanceof PortalError && err.code === 'SESSION_INVALID')) throw err;
        this.opts.logger?.warn({ op: 'upload', rc: err.rc }, 'FinanzOnline session expired; logging in again');
        sessionId = await this.login(p, signal);
        return await this.upload({ sessionId, tid: p.tid, benid: p.benid, art: p.art, uebermittlung: p.uebermittlung, mode: p.mode }, signal);
      }
    } finally {
      await this.logout({ sessionId, tid: p.tid, benid: p.benid }, signal).catch((err: unknown) => {
        this.opts.logger?.warn({ op: 'logout', code: err instanceof PortalError ? err.code : undefined }, 'FinanzOnline logout failed');
      });
    }
  }

  private rcOf(res: Record<string, unknown>, op: Op): number {
    const raw = text(res.rc);
    if (raw === undefined || !/^-?\d+$/.test(raw)) {
      throw new PortalError(`FinanzOnline ${op} response has no rc`, { transient: true, code: 'BAD_RESPONSE' });
    }
    const rc = Number(raw);
    this.opts.logger?.info({ op, rc }, 'FinanzOnline answered');
    return rc;
  }

  private async call(op: Op, url: string, body: string, responseElement: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const started = Date.now();
    let status: number;
    let contentType: string;
    let payload: string;
    try {
      const res = await this.fetchImpl(url, {
        method: 'POST',
        headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${op}"`, Accept: 'text/xml' },
        body,
        signal: combined,
      });
      status = res.status;
      contentType = res.headers.get('content-type') ?? '';
      payload = await res.text();
    } catch (err) {
      const timedOut = timeout.aborted || (err as { name?: string })?.name === 'TimeoutError';
      this.opts.logger?.warn({ op, durationMs: Date.now() - started, code: timedOut ? 'TIMEOUT' : 'NETWORK' }, 'FinanzOnline request failed');
      throw timedOut
        ? new PortalError(`FinanzOnline ${op} timed out after ${this.timeoutMs} ms`, { transient: true, code: 'TIMEOUT' })
        : new PortalError(`FinanzOnline ${op} request failed: ${(err as Error)?.message ?? 'network error'}`, { transient: true, code: 'NETWORK', cause: err });
    }

    // The portal answers maintenance with an HTML page instead of SOAP (treated as rc -2).
    if (/text\/html/i.test(contentType) || /^\s*(<!doctype html|<html)/i.test(payload)) {
      throw new PortalError(`FinanzOnline ${op}: maintenance page (HTTP ${status})`, { transient: true, code: 'MAINTENANCE', httpStatus: status });
    }

    let doc: Record<string, unknown> | undefined;
    try {
      doc = payload.trim() ? (parser.parse(payload) as Record<string, unknown>) : undefined;
    } catch {
      doc = undefined;
    }
    const bodyEl = (doc?.Envelope as Record<string, unknown> | undefined)?.Body as Record<string, unknown> | undefined;

    const fault = bodyEl?.Fault as Record<string, unknown> | undefined;
    if (fault) {
      const faultcode = text(fault.faultcode) ?? '';
      const faultstring = text(fault.faultstring) ?? '';
      // SOAP 1.1: Client faults are our request's fault (retrying cannot help); Server faults may pass.
      const clientFault = /(^|:)Client/.test(faultcode);
      throw new PortalError(`FinanzOnline ${op}: SOAP fault ${faultcode}${faultstring ? ` (${faultstring})` : ''}`, {
        transient: !clientFault,
        code: 'SOAP_FAULT',
        httpStatus: status,
        portalMessage: faultstring || undefined,
      });
    }
    if (status < 200 || status >= 300) {
      const transient = status >= 500 || status === 408 || status === 429;
      throw new PortalError(`FinanzOnline ${op}: HTTP ${status}`, { transient, code: 'HTTP_ERROR', httpStatus: status });
    }
    const response = bodyEl?.[responseElement];
    if (!response || typeof response !== 'object') {
      throw new PortalError(`FinanzOnline ${op}: unexpected response (no ${responseElement})`, { transient: true, code: 'BAD_RESPONSE', httpStatus: status });
    }
    this.opts.logger?.info({ op, httpStatus: status, durationMs: Date.now() - started }, 'FinanzOnline request done');
    return response as Record<string, unknown>;
  }
}

function text(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // <msg/> parses as "" with parseTagValue false; objects (mixed content) have #text.
  if (typeof value === 'object' && '#text' in (value as Record<string, unknown>)) return String((value as Record<string, unknown>)['#text']);
  return undefined;
}
