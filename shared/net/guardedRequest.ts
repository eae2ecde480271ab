import http from 'node:http';
import https from 'node:https';
import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { BodyTooLargeError, readBoundedText } from '../providers/boundedBody';
import { hostPort, refusedAddressReason } from './addressPolicy';

/** The target may not be called: the URL or the address its name resolves to (SSRF rules). Retrying cannot help until DNS or the URL changes. */
export class TargetRefusedError extends Error {
  readonly code = 'TARGET_REFUSED';
}

export interface TargetPolicy {
  /** `host:port` entries that may be plain http and private (OUTBOUND_WEBHOOKS_ALLOW_TARGETS). */
  allowTargets: readonly string[];
}

/**
 * Why a URL may not be a target, judged from the URL alone (no DNS): not https, credentials in it,
 * a literal non-public IP. null when it passes (its name is still checked at each connection).
 */
export function refusedUrlReason(raw: string, policy: TargetPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a valid URL';
  }
  if (url.username || url.password) return 'must not contain credentials';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must use https';
  if (policy.allowTargets.includes(hostPort(url))) return null;
  if (url.protocol !== 'https:') return 'must use https';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    const reason = refusedAddressReason(host);
    if (reason) return `must not point to a non-public address (${reason})`;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return 'must not point to localhost';
  return null;
}

/**
 * A DNS lookup that refuses a name with any non-public address and hands the connection only the
 * addresses it checked: the socket connects to exactly what was judged, so a DNS answer that
 * changes between check and connect (rebinding) cannot redirect it.
 */
export function checkedLookup(): LookupFunction {
  return (hostname, options, callback) => {
    // Read at call time (not bound at import), so a test can put a resolver of its own in place.
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return (callback as (e: Error) => void)(err);
      const list = addresses as { address: string; family: number }[];
      const refused = list.map((a) => refusedAddressReason(a.address)).find(Boolean);
      if (refused || !list.length) {
        return (callback as (e: Error) => void)(new TargetRefusedError(`${hostname} resolves to a refused address: ${refused ?? 'no address'}`));
      }
      if ((options as { all?: boolean }).all) return (callback as (e: null, a: typeof list) => void)(null, list);
      (callback as (e: null, a: string, f: number) => void)(null, list[0].address, list[0].family);
    });
  };
}

export interface GuardedResponse {
  statusCode: number;
  /** Up to `maxBodyBytes` of the answer; longer answers are not read (bodyTruncated). */
  body: string;
  bodyTruncated: boolean;
  location: string | null;
}

/**
 * POST to a customer-given URL under the SSRF rules: https only and public addresses only (both
 * checked after DNS, on the address connected to), unless `host:port` is in the allow list;
 * redirects are not followed (a 3xx is the answer); the whole exchange times out after
 * `timeoutMs`; at most `maxBodyBytes` of the answer are read (shared/providers/boundedBody.ts).
 */
export async function guardedPost(
  rawUrl: string,
  req: { headers: Record<string, string>; body: string; timeoutMs: number; maxBodyBytes: number },
  policy: TargetPolicy,
): Promise<GuardedResponse> {
  const urlReason = refusedUrlReason(rawUrl, policy);
  if (urlReason) throw new TargetRefusedError(`URL ${urlReason}`);
  const url = new URL(rawUrl);
  const allowed = policy.allowTargets.includes(hostPort(url));
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<GuardedResponse>((resolve, reject) => {
    const request = transport.request(
      url,
      {
        method: 'POST',
        headers: { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) },
        // No connection reuse: each delivery resolves and checks its target anew.
        agent: false,
        ...(allowed ? {} : { lookup: checkedLookup() }),
      },
      (res) => {
        const headers = new Headers();
        if (res.headers['content-length']) headers.set('content-length', res.headers['content-length']);
        const response = new Response(Readable.toWeb(res) as ReadableStream, { headers });
        readBoundedText(response, req.maxBodyBytes).then(
          (body) => finish(resolve, { statusCode: res.statusCode ?? 0, body, bodyTruncated: false, location: res.headers.location ?? null }),
          (err) => {
            if (err instanceof BodyTooLargeError) {
              res.destroy();
              finish(resolve, { statusCode: res.statusCode ?? 0, body: '', bodyTruncated: true, location: res.headers.location ?? null });
            } else finish(reject, err);
          },
        );
      },
    );
    const timer = setTimeout(() => request.destroy(new Error(`no complete answer within ${req.timeoutMs} ms`)), req.timeoutMs);
    const finish = <T>(settle: (v: T) => void, value: T) => {
      clearTimeout(timer);
      settle(value);
    };
    request.on('error', (err) => finish(reject, err));
    request.end(req.body);
  });
}
