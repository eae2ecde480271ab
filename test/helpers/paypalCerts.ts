import { execFileSync } from 'node:child_process';
import { sign as cryptoSign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { paypalSignedString } from '../../shared/providers/payments/paypal';

/**
 * Test stand-in for PayPal's signing certificate. Node cannot build an X.509 certificate by itself,
 * so `openssl req -x509` makes a fresh self-signed RSA-2048 certificate in a temp dir; the key never
 * leaves the test process.
 */
export interface PaypalTestCert {
  certPem: string;
  keyPem: string;
  /** Base64 SHA256withRSA signature, as in PAYPAL-TRANSMISSION-SIG. */
  sign(data: string | Buffer): string;
}

export function createPaypalTestCert(opts: { days?: number; commonName?: string } = {}): PaypalTestCert {
  const dir = mkdtempSync(join(tmpdir(), 'paypal-cert-'));
  try {
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-sha256',
        '-keyout',
        keyPath,
        '-out',
        certPath,
        '-days',
        String(opts.days ?? 2),
        '-subj',
        `/CN=${opts.commonName ?? 'messageverificationcerts.paypal.test'}`,
      ],
      { stdio: 'pipe' },
    );
    const certPem = readFileSync(certPath, 'utf8');
    const keyPem = readFileSync(keyPath, 'utf8');
    return { certPem, keyPem, sign: (data) => cryptoSign('sha256', Buffer.from(data), keyPem).toString('base64') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface CertServer {
  /** e.g. http://127.0.0.1:40123 — put it on the allow-list. */
  origin: string;
  /** Where the certificate is served. */
  certUrl: string;
  /** Requests per path, to prove caching. */
  hits: Map<string, number>;
  /** Serve something else at a path (status, body). */
  route(path: string, status: number, body: string): void;
  close(): Promise<void>;
}

/** A tiny HTTP server on 127.0.0.1 serving the certificate at /v1/notifications/certs/CERT-test. */
export async function startCertServer(certPem: string): Promise<CertServer> {
  const certPath = '/v1/notifications/certs/CERT-test';
  const routes = new Map<string, { status: number; body: string }>([[certPath, { status: 200, body: certPem }]]);
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes.get(path);
    res.writeHead(route?.status ?? 404, { 'content-type': 'application/x-pem-file' });
    res.end(route?.body ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    certUrl: `${origin}${certPath}`,
    hits,
    route: (path, status, body) => void routes.set(path, { status, body }),
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}

/** Headers of a PayPal delivery of `rawBody`, signed with the test key for `webhookId`. */
export function signPaypalDelivery(
  cert: PaypalTestCert,
  args: { rawBody: Buffer; webhookId: string; certUrl: string; transmissionId?: string; transmissionTime?: string },
): Record<string, string> {
  const transmissionId = args.transmissionId ?? '1c6772d0-5106-11ef-9b66-89f3f924d48a';
  const transmissionTime = args.transmissionTime ?? '2024-08-02T19:33:35Z';
  return {
    'content-type': 'application/json',
    'paypal-transmission-id': transmissionId,
    'paypal-transmission-time': transmissionTime,
    'paypal-transmission-sig': cert.sign(paypalSignedString(transmissionId, transmissionTime, args.webhookId, args.rawBody)),
    'paypal-cert-url': args.certUrl,
    'paypal-auth-algo': 'SHA256withRSA',
    'paypal-auth-version': 'v2',
  };
}
