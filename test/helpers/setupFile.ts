import { randomBytes } from 'node:crypto';
import { afterAll } from 'vitest';

/**
 * Runs before each test file (in that file's isolated module registry): each file gets its own
 * Redis key prefix, so queues and rate limiters of different files never see each other.
 */
process.env.NODE_ENV = 'test';
process.env.REDIS_PREFIX = `${process.env.REDIS_PREFIX ?? 'test'}_${randomBytes(4).toString('hex')}`;
process.env.LOG_LEVEL ??= 'silent';
// Tests talk plain HTTP to a local port; the HTTPS rule for webhooks is tested explicitly.
process.env.REQUIRE_HTTPS_WEBHOOKS ??= 'false';
// Spec limits stay the defaults in production; tests that check a limit set their own.
process.env.RATE_LIMIT_API_POINTS ??= '1000000';
process.env.RATE_LIMIT_LOGIN_POINTS ??= '1000000';
process.env.RATE_LIMIT_REGISTER_POINTS ??= '1000000';
process.env.RATE_LIMIT_WEBHOOKS_POINTS ??= '1000000';
process.env.RATE_LIMIT_PASSWORD_RESET_EMAIL_POINTS ??= '1000000';
process.env.RATE_LIMIT_PASSWORD_RESET_IP_POINTS ??= '1000000';
// The workers' recovery loop sweeps every tenant's rows of the one database the files share, but
// queues into its own file's Redis prefix: off, except in the tests of the loop itself.
process.env.RECOVERY_INTERVAL_MS ??= '0';
// Workers never fetch the real ECB feed in tests; test/workers/ecbRates.test.ts serves its own.
process.env.ECB_RATES_URL ??= '';

afterAll(async () => {
  // Close whatever shared connections this file opened, so the fork exits cleanly.
  const [{ closeDb }, { closeQueues }, { closeProducerRedis }] = await Promise.all([
    import('../../shared/db'),
    import('../../shared/queues'),
    import('../../shared/redis'),
  ]);
  await closeQueues();
  await closeProducerRedis();
  await closeDb();
});
