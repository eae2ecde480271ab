import pino from 'pino';
import { config } from './config';
import { currentLogContext } from './logContext';

/**
 * JSON logs. Secrets never reach a log line: the redact paths cover auth headers, cookies,
 * passwords, tokens and provider secrets wherever they appear one level deep in a log object.
 */
export const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["stripe-signature"]',
  'req.headers["paypal-transmission-sig"]',
  'req.headers["x-bank-signature"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.token',
  '*.refreshToken',
  '*.secret',
  '*.webhookSecret',
  '*.apiKey',
  '*.pin',
  'password',
  'token',
];

/**
 * A request path as it may be logged. The last segment of a webhook URL
 * (/api/payment-import/<provider>/<token>) is the connector's secret: whoever reads it can post
 * to the tenant's books, so it is masked like any other credential.
 */
export function loggablePath(path: string): string {
  // Any letter case: /API/payment-import/… does not route (404), but its last segment may still be a real token.
  return path.replace(/^(\/api\/payment-import\/[^/]+\/)[^/]+/i, '$1[redacted]');
}

function level(): string {
  try {
    return config().logLevel;
  } catch {
    // A bad configuration is reported by the entry point with one clear line; log at info meanwhile.
    return 'info';
  }
}

export const logger = pino({
  level: level(),
  base: { service: 'accounting', pid: process.pid },
  redact: { paths: redactPaths, censor: '[redacted]' },
  timestamp: pino.stdTimeFunctions.isoTime,
  // The request or job the line is written for (shared/logContext.ts). A copy: pino merges the
  // line's own fields into the object the mixin returns, which would change the stored context.
  mixin: () => ({ ...currentLogContext() }),
});

export type Logger = typeof logger;
