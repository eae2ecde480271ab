import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../shared/config';

describe('loadConfig', () => {
  it('has working local defaults that match the spec limits', () => {
    const cfg = loadConfig({});
    expect(cfg.port).toBe(3000);
    expect(cfg.jwtAccessTtlSec).toBe(900);
    expect(cfg.refreshTtlSec).toBe(7 * 24 * 3600);
    expect(cfg.rateLimits).toEqual({
      login: { points: 10, durationSec: 900 },
      register: { points: 5, durationSec: 3600 },
      api: { points: 300, durationSec: 3600 },
      webhooks: { points: 30, durationSec: 3600 },
      passwordResetEmail: { points: 5, durationSec: 3600 },
      passwordResetIp: { points: 20, durationSec: 3600 },
    });
    expect(cfg.encryptionKey.length).toBe(32);
    expect(cfg.publicAppUrl).toBeNull();
    expect(cfg.webauthn.relatedOrigins).toEqual([]);
  });

  it('reads PUBLIC_APP_URL and WEBAUTHN_RELATED_ORIGINS (origins only, deduplicated)', () => {
    const cfg = loadConfig({
      PUBLIC_APP_URL: 'https://app.buchhaltung.at',
      WEBAUTHN_RELATED_ORIGINS: 'https://buchhaltung.de, https://buchhaltung.eu,https://buchhaltung.de',
    });
    expect(cfg.publicAppUrl).toBe('https://app.buchhaltung.at');
    expect(cfg.webauthn.relatedOrigins).toEqual(['https://buchhaltung.de', 'https://buchhaltung.eu']);
    for (const bad of ['https://buchhaltung.de/login', 'ftp://buchhaltung.de', 'buchhaltung.de']) {
      expect(() => loadConfig({ WEBAUTHN_RELATED_ORIGINS: bad }), bad).toThrow(/WEBAUTHN_RELATED_ORIGINS must list origins/);
    }
    expect(() => loadConfig({ PUBLIC_APP_URL: 'javascript:alert(1)' })).toThrow(/PUBLIC_APP_URL must use http: or https:/);
  });

  it('names every bad variable in one error', () => {
    try {
      loadConfig({ PORT: '70000', DATABASE_URL: 'mysql://x', TRUST_PROXY: 'maybe', LOG_LEVEL: 'loud' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const msg = (err as Error).message;
      expect(msg).toMatch(/PORT must be between 0 and 65535/);
      expect(msg).toMatch(/DATABASE_URL must use postgres/);
      expect(msg).toMatch(/TRUST_PROXY must be true or false/);
      expect(msg).toMatch(/LOG_LEVEL must be one of/);
    }
  });

  it('requires real secrets in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/JWT_ACCESS_SECRET.*ENCRYPTION_KEY|ENCRYPTION_KEY/);
    const cfg = loadConfig({
      NODE_ENV: 'production',
      JWT_ACCESS_SECRET: 'p'.repeat(40),
      ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      METRICS_TOKEN: 'm'.repeat(32),
    });
    expect(cfg.env).toBe('production');
  });

  it('the relay listens on DATABASE_URL unless DATABASE_LISTEN_URL names a direct connection', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://a@pgbouncer:6432/acct' }).databaseListenUrl).toBe('postgres://a@pgbouncer:6432/acct');
    const direct = loadConfig({ DATABASE_URL: 'postgres://a@pgbouncer:6432/acct', DATABASE_LISTEN_URL: 'postgres://a@db:5432/acct' });
    expect(direct).toMatchObject({ databaseUrl: 'postgres://a@pgbouncer:6432/acct', databaseListenUrl: 'postgres://a@db:5432/acct' });
    expect(() => loadConfig({ DATABASE_LISTEN_URL: 'redis://db' })).toThrow(/DATABASE_LISTEN_URL must use postgres/);
  });

  it('reads per-queue worker concurrency', () => {
    const cfg = loadConfig({ WORKER_CONCURRENCY: '3', WORKER_CONCURRENCY_TAX_PORTAL: '1' });
    expect(cfg.workerConcurrency).toMatchObject({ default: 3, 'tax-portal': 1 });
  });

  it('the CPU-bound rendering queues default to one renderer per core, at most WORKER_CONCURRENCY; their own variable wins', () => {
    const cores = availableParallelism();
    expect(loadConfig({}).workerConcurrency).toMatchObject({ default: 5, documents: Math.min(5, cores), reports: Math.min(5, cores) });
    expect(loadConfig({ WORKER_CONCURRENCY: '1' }).workerConcurrency).toMatchObject({ documents: 1, reports: 1 });
    expect(loadConfig({ WORKER_CONCURRENCY_DOCUMENTS: '7' }).workerConcurrency).toMatchObject({ documents: 7, reports: Math.min(5, cores) });
  });

  it.each([
    ['WEBHOOK_BATCH_MAX', 'webhookBatchMax', 20, 100],
    ['WEBHOOK_BATCHES_IN_FLIGHT', 'webhookBatchesInFlight', 2, 8],
    ['WEBHOOK_STORE_BATCH_MAX', 'webhookStoreBatchMax', 50, 200],
  ] as const)('%s: %i by default, 1 at least (batches off, one batch at a time), out of range is refused', (name, field, byDefault, max) => {
    expect(loadConfig({})[field]).toBe(byDefault);
    expect(loadConfig({ [name]: '1' })[field]).toBe(1);
    expect(() => loadConfig({ [name]: '0' })).toThrow(new RegExp(name));
    expect(() => loadConfig({ [name]: String(max + 1) })).toThrow(new RegExp(name));
  });
});
