/**
 * The only reader of process.env. Every variable is documented here and in the README's
 * configuration table; loadConfig() validates them all at start-up and throws one ConfigError
 * that names each bad variable, so a misconfigured process exits with one clear line.
 */
import { availableParallelism } from 'node:os';
export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

export interface RateLimit {
  points: number;
  durationSec: number;
}

export interface Config {
  env: 'development' | 'test' | 'production';
  port: number;
  host: string;
  databaseUrl: string;
  /**
   * A direct (session) connection for the workers' outbox relay, which LISTENs: a transaction
   * pooler such as PgBouncer in DATABASE_URL would not deliver notifications. Defaults to DATABASE_URL.
   */
  databaseListenUrl: string;
  databasePoolMax: number;
  redisUrl: string;
  /** Prefix for every Redis key (queues, rate limiters): lets several deployments or test runs share one Redis. */
  redisPrefix: string;
  jwtAccessSecret: string;
  jwtAccessTtlSec: number;
  refreshTtlSec: number;
  /** 32-byte key (hex or base64) for AES-256-GCM encryption of secrets at rest. */
  encryptionKey: Buffer;
  logLevel: string;
  bodyLimitBytes: number;
  trustProxy: boolean;
  trustProxyHops: number;
  /** When true, plain-HTTP webhook deliveries are refused (spec: HTTPS required). */
  requireHttpsWebhooks: boolean;
  publicBaseUrl: string;
  /**
   * The front end users open (the password-reset link points there); null: PUBLIC_BASE_URL is
   * used, for a front end served from the API's address.
   */
  publicAppUrl: string | null;
  corsOrigins: string[];
  rateLimits: {
    login: RateLimit;
    register: RateLimit;
    api: RateLimit;
    webhooks: RateLimit;
    /** POST /api/auth/password/forgot, per e-mail (keyed by its hash) and per IP. */
    passwordResetEmail: RateLimit;
    passwordResetIp: RateLimit;
  };
  /** How long the API waits for a rendering job before answering 503 + Retry-After. */
  renderWaitMs: number;
  /**
   * Memory (MiB) an API process gives serialized invoice views, each checked against the
   * database's row versions before it is served (docs/invoice-read-cache.md); 0 turns it off.
   */
  invoiceViewCacheMb: number;
  workerConcurrency: Record<string, number>;
  /** Webhook events a worker process books in one transaction (1 = one transaction per event). */
  webhookBatchMax: number;
  /** Webhook batches a worker process runs at the same time, each on its own connection. */
  webhookBatchesInFlight: number;
  /** Verified webhook deliveries an API process stores in one statement (1 = one statement per delivery). */
  webhookStoreBatchMax: number;
  /** BullMQ job lock: a job whose worker died is taken over once it lapses, within two stalled checks (docs/operations.md, "Locks"). */
  workerLockDurationMs: number;
  /**
   * The workers' recovery loop (workers/recoveryLoop.ts), which does not depend on what Redis
   * holds: every intervalMs each worker process re-declares the recurring jobs and (one process
   * at a time) queues again the work PostgreSQL says is pending but whose job Redis no longer has,
   * once it has been pending staleAfterMs. A job Redis lost is queued again within
   * staleAfterMs + 2 × intervalMs (100 s by default; docs/resilience.md). intervalMs 0: off.
   */
  recovery: { intervalMs: number; staleAfterMs: number };
  bullBoard: { user: string | null; password: string | null };
  /** Bearer token for /metrics (API and workers); required in production. */
  metricsToken: string | null;
  /** Workers expose /metrics on this port when set (0 = off). */
  workerMetricsPort: number;
  /**
   * Nice value (0–19) a worker process gives itself: on a host shared with the API, jobs yield the
   * CPU to requests and webhook deliveries. 10 by default: a job can wait, a provider's delivery
   * and a user's request should not; on a host of its own it changes nothing (docs/production.md).
   */
  workerNice: number;
  /** Interface the worker's /metrics binds to; loopback unless a scraper elsewhere needs it. */
  workerMetricsHost: string;
  smtp: { url: string | null; from: string };
  ai: { baseUrl: string | null; apiKey: string | null; model: string; timeoutMs: number };
  mollieApiBaseUrl: string;
  paypalCertHostAllowList: string[];
  finanzOnline: { sessionUrl: string; fileUploadUrl: string; timeoutMs: number };
  /**
   * The ECB euro reference rates feed (docs/exchange-rates.md): operator configuration, fetched
   * daily by the fetch-ecb-rates job, each request bounded by timeoutMs. null (ECB_RATES_URL set
   * empty): never fetched, users enter foreign-currency rates by hand.
   */
  ecb: { ratesUrl: string | null; timeoutMs: number };
  /**
   * Outbound webhooks (docs/outbound-webhooks.md). allowTargets: `host:port` entries that may be
   * plain http and private (tests, on-premises receivers); every other target must be https and
   * public. retryBaseMs: the first retry's wait, doubled per attempt (tests shorten it).
   */
  outboundWebhooks: { allowTargets: string[]; retryBaseMs: number };
  /**
   * WebAuthn relying party: the RP ID is the browser-facing domain, the origin its exact
   * scheme://host[:port]. relatedOrigins: other front ends (other domains) that use the same RP
   * ID through WebAuthn related origin requests; served at the RP ID's /.well-known/webauthn and
   * accepted in clientDataJSON next to the origin (docs/auth.md, "One passkey for every address").
   */
  webauthn: { rpId: string; rpName: string; origin: string; relatedOrigins: string[] };
}

type Env = Record<string, string | undefined>;

const DEV_JWT_SECRET = 'dev-only-access-secret-change-me-please-0123456789';
const DEV_ENCRYPTION_KEY = '00'.repeat(32);

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const nodeEnv = (env.NODE_ENV ?? 'development') as Config['env'];
  if (!['development', 'test', 'production'].includes(nodeEnv)) {
    problems.push(`NODE_ENV must be development, test or production (got "${nodeEnv}")`);
  }
  const isProd = nodeEnv === 'production';

  const int = (name: string, def: number, min = 0, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return def;
    if (!/^\d+$/.test(raw.trim())) {
      problems.push(`${name} must be a whole number (got "${raw}")`);
      return def;
    }
    const n = Number(raw);
    if (n < min || n > max) problems.push(`${name} must be between ${min} and ${max} (got ${n})`);
    return n;
  };
  const bool = (name: string, def: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return def;
    if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return def;
  };
  const url = (name: string, def: string | null, protocols: string[]): string | null => {
    const raw = env[name] ?? def;
    if (raw === null || raw === '') return null;
    try {
      const u = new URL(raw);
      if (!protocols.includes(u.protocol)) problems.push(`${name} must use ${protocols.join(' or ')} (got "${u.protocol}")`);
    } catch {
      problems.push(`${name} is not a valid URL`);
    }
    return raw;
  };
  const list = (name: string, def: string[]): string[] => {
    const raw = env[name];
    if (raw === undefined) return def;
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  };
  /**
   * A comma-separated list of web origins (scheme://host[:port], nothing after): what a browser
   * writes into clientDataJSON.origin, so compared as exact strings.
   */
  const originList = (name: string): string[] => {
    const out: string[] = [];
    for (const raw of list(name, [])) {
      try {
        const u = new URL(raw);
        if (!['http:', 'https:'].includes(u.protocol) || raw.replace(/\/$/, '') !== u.origin) {
          problems.push(`${name} must list origins like https://example.at, without path (got "${raw}")`);
        } else if (!out.includes(u.origin)) out.push(u.origin);
      } catch {
        problems.push(`${name} must list origins like https://example.at (got "${raw}")`);
      }
    }
    return out;
  };
  const limit = (name: string, points: number, durationSec: number): RateLimit => ({
    points: int(`RATE_LIMIT_${name}_POINTS`, points, 1),
    durationSec: int(`RATE_LIMIT_${name}_WINDOW_SEC`, durationSec, 1),
  });

  const jwtAccessSecret = env.JWT_ACCESS_SECRET ?? (isProd ? '' : DEV_JWT_SECRET);
  if (jwtAccessSecret.length < 32) problems.push('JWT_ACCESS_SECRET must be set to at least 32 characters');

  let encryptionKey = Buffer.alloc(0);
  const rawKey = env.ENCRYPTION_KEY ?? (isProd ? '' : DEV_ENCRYPTION_KEY);
  if (/^[0-9a-fA-F]{64}$/.test(rawKey)) encryptionKey = Buffer.from(rawKey, 'hex');
  else if (rawKey) encryptionKey = Buffer.from(rawKey, 'base64');
  if (encryptionKey.length !== 32) problems.push('ENCRYPTION_KEY must be 32 bytes, as 64 hex characters or base64');
  // Without a token /metrics falls back to loopback-only, which a reverse proxy on the same host
  // turns into public: production must not rely on it.
  if (isProd && (env.METRICS_TOKEN ?? '').length < 16) problems.push('METRICS_TOKEN must be set to at least 16 characters in production');

  const databaseUrl = url('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/accounting', ['postgres:', 'postgresql:'])!;
  // Checked only when set: a bad DATABASE_URL is one problem, not two.
  const databaseListenUrl = env.DATABASE_LISTEN_URL ? url('DATABASE_LISTEN_URL', null, ['postgres:', 'postgresql:'])! : databaseUrl;
  const redisUrl = url('REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:'])!;
  const port = int('PORT', 3000, 0, 65535);
  const smtpUrl = url('SMTP_URL', null, ['smtp:', 'smtps:']);
  const aiBaseUrl = url('AI_BASE_URL', null, ['http:', 'https:']);

  const concurrency: Record<string, number> = {};
  for (const [k, v] of Object.entries(env)) {
    const m = /^WORKER_CONCURRENCY_([A-Z_]+)$/.exec(k);
    if (m && v) concurrency[m[1].toLowerCase().replace(/_/g, '-')] = int(k, 1, 1, 100);
  }
  concurrency.default = int('WORKER_CONCURRENCY', 5, 1, 100);
  // Rendering is CPU-bound in sandboxed children: more of them than cores only adds memory (one
  // Node.js process each) and CPU per document (measured: docs/benchmarks.md, "Renderers per core").
  for (const queue of ['documents', 'reports']) concurrency[queue] ??= Math.min(concurrency.default, availableParallelism());
  // Webhook jobs are booked in batches of up to WEBHOOK_BATCH_MAX, WEBHOOK_BATCHES_IN_FLIGHT at a
  // time (workers/jobs/webhooks/eventBatches.ts): unless told otherwise a worker holds that many
  // jobs, so every batch can fill.
  const webhookBatchMax = int('WEBHOOK_BATCH_MAX', 20, 1, 100);
  const webhookBatchesInFlight = int('WEBHOOK_BATCHES_IN_FLIGHT', 2, 1, 8);
  if (!concurrency.webhooks && webhookBatchMax > 1) concurrency.webhooks = webhookBatchMax * webhookBatchesInFlight;

  const logLevel = env.LOG_LEVEL ?? (nodeEnv === 'test' ? 'silent' : 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "${logLevel}")`);
  }

  const config: Config = {
    env: nodeEnv,
    port,
    host: env.HOST ?? '0.0.0.0',
    databaseUrl,
    databaseListenUrl,
    databasePoolMax: int('DATABASE_POOL_MAX', 10, 1, 500),
    redisUrl,
    redisPrefix: env.REDIS_PREFIX ?? 'acct',
    jwtAccessSecret,
    jwtAccessTtlSec: int('JWT_ACCESS_TTL_SEC', 15 * 60, 1),
    refreshTtlSec: int('REFRESH_TTL_SEC', 7 * 24 * 3600, 1),
    encryptionKey,
    logLevel,
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    trustProxy: bool('TRUST_PROXY', false),
    trustProxyHops: int('TRUST_PROXY_HOPS', 1, 1, 10),
    requireHttpsWebhooks: bool('REQUIRE_HTTPS_WEBHOOKS', true),
    publicBaseUrl: url('PUBLIC_BASE_URL', `http://localhost:${port}`, ['http:', 'https:'])!,
    publicAppUrl: url('PUBLIC_APP_URL', null, ['http:', 'https:']),
    corsOrigins: list('CORS_ORIGINS', []),
    rateLimits: {
      login: limit('LOGIN', 10, 15 * 60),
      register: limit('REGISTER', 5, 60 * 60),
      api: limit('API', 300, 60 * 60),
      webhooks: limit('WEBHOOKS', 30, 60 * 60),
      passwordResetEmail: limit('PASSWORD_RESET_EMAIL', 5, 60 * 60),
      passwordResetIp: limit('PASSWORD_RESET_IP', 20, 60 * 60),
    },
    renderWaitMs: int('RENDER_WAIT_MS', 15000, 100),
    invoiceViewCacheMb: int('INVOICE_VIEW_CACHE_MB', 32, 0, 4096),
    workerConcurrency: concurrency,
    webhookBatchMax,
    webhookBatchesInFlight,
    // Deliveries the API stores in one statement (shared/webhooks/ingest.ts), one statement at a time.
    webhookStoreBatchMax: int('WEBHOOK_STORE_BATCH_MAX', 50, 1, 200),
    workerLockDurationMs: int('WORKER_LOCK_DURATION_MS', 30_000, 1000, 600_000),
    recovery: {
      // 0 turns the loop off (the test suite: its files share one database under different Redis prefixes).
      intervalMs: int('RECOVERY_INTERVAL_MS', 20_000, 0, 600_000),
      staleAfterMs: int('RECOVERY_STALE_AFTER_MS', 60_000, 1000, 24 * 3600_000),
    },
    bullBoard: { user: env.BULL_BOARD_USER ?? null, password: env.BULL_BOARD_PASSWORD ?? null },
    metricsToken: env.METRICS_TOKEN || null,
    workerMetricsPort: int('WORKER_METRICS_PORT', 0, 0, 65535),
    workerNice: int('WORKER_NICE', 10, 0, 19),
    workerMetricsHost: env.WORKER_METRICS_HOST || '127.0.0.1',
    smtp: { url: smtpUrl, from: env.SMTP_FROM ?? 'Buchhaltung <no-reply@localhost>' },
    ai: {
      baseUrl: aiBaseUrl,
      apiKey: env.AI_API_KEY ?? null,
      model: env.AI_MODEL ?? 'gpt-4o-mini',
      timeoutMs: int('AI_TIMEOUT_MS', 30000, 100),
    },
    mollieApiBaseUrl: url('MOLLIE_API_BASE_URL', 'https://api.mollie.com', ['http:', 'https:'])!,
    paypalCertHostAllowList: list('PAYPAL_CERT_ORIGINS', [
      'https://api.paypal.com',
      'https://api-m.paypal.com',
      'https://api.sandbox.paypal.com',
      'https://api-m.sandbox.paypal.com',
    ]),
    finanzOnline: {
      sessionUrl: url('FINANZONLINE_SESSION_URL', 'https://finanzonline.bmf.gv.at/fonws/ws/session', ['http:', 'https:'])!,
      fileUploadUrl: url('FINANZONLINE_FILEUPLOAD_URL', 'https://finanzonline.bmf.gv.at/fon/ws/fileupload', ['http:', 'https:'])!,
      timeoutMs: int('FINANZONLINE_TIMEOUT_MS', 30000, 100),
    },
    outboundWebhooks: {
      allowTargets: (env.OUTBOUND_WEBHOOKS_ALLOW_TARGETS ?? '')
        .split(',')
        .map((t) => t.trim().toLowerCase())
        .filter(Boolean)
        // IPv6 written [::1]:8080 as URLs do; compared without the brackets (shared/net/addressPolicy.ts, hostPort).
        .map((t) => t.replace(/^\[([^\]]+)\]/, '$1')),
      retryBaseMs: int('OUTBOUND_WEBHOOKS_RETRY_BASE_MS', 60_000, 10),
    },
    ecb: {
      ratesUrl: url('ECB_RATES_URL', 'https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist-90d.xml', ['http:', 'https:']),
      timeoutMs: int('ECB_TIMEOUT_MS', 30000, 100),
    },
    webauthn: {
      rpId: env.WEBAUTHN_RP_ID ?? 'localhost',
      rpName: env.WEBAUTHN_RP_NAME ?? 'Buchhaltung',
      origin: url('WEBAUTHN_ORIGIN', 'http://localhost:3000', ['http:', 'https:'])!,
      relatedOrigins: originList('WEBAUTHN_RELATED_ORIGINS'),
    },
  };
  for (const t of config.outboundWebhooks.allowTargets) {
    if (!/^([^:\s]+|[0-9a-f:.]+):\d{1,5}$/.test(t)) problems.push(`OUTBOUND_WEBHOOKS_ALLOW_TARGETS entries must be host:port (got "${t}")`);
  }
  try {
    const host = new URL(config.webauthn.origin).hostname;
    const rp = config.webauthn.rpId;
    if (host !== rp && !host.endsWith(`.${rp}`))
      problems.push(`WEBAUTHN_RP_ID must be the host of WEBAUTHN_ORIGIN or a parent domain of it (got "${rp}" for "${host}")`);
  } catch {
    // WEBAUTHN_ORIGIN is already reported as an invalid URL.
  }
  if (problems.length) throw new ConfigError(problems);
  return config;
}

let cached: Config | null = null;
/** The process-wide configuration, loaded once. */
export function config(): Config {
  cached ??= loadConfig();
  return cached;
}

/** Re-read the environment (tests that start a local fake server and point a variable at it). */
export function reloadConfig(): Config {
  cached = loadConfig();
  return cached;
}
