import nodemailer, { type Transporter } from 'nodemailer';

/**
 * SMTP delivery through nodemailer. SMTP_URL carries host, port, credentials and TLS mode
 * (smtp:// with STARTTLS when offered, smtps:// for implicit TLS). One pooled transport per URL.
 */
const transports = new Map<string, Transporter>();

export function smtpTransport(url: string): Transporter {
  let t = transports.get(url);
  if (!t) {
    t = nodemailer.createTransport(url, { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 } as never);
    transports.set(url, t);
  }
  return t;
}

/**
 * SMTP reply codes 4xx and network failures are temporary (retry later); 5xx are permanent
 * (the server refuses this message: retrying cannot help).
 */
export function isTemporarySmtpFailure(err: unknown): boolean {
  const e = err as { responseCode?: number; code?: string };
  if (typeof e.responseCode === 'number') return e.responseCode < 500;
  return true;
}

export function closeSmtpTransports(): void {
  for (const t of transports.values()) t.close();
  transports.clear();
}
