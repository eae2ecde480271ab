import type { Context, Middleware } from 'koa';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import type { Config, RateLimit } from '../../shared/config';
import { rateLimited } from '../../shared/errors';

export type LimiterName = 'login' | 'register' | 'api' | 'webhooks' | 'passwordResetEmail' | 'passwordResetIp';
export type Limiters = Record<LimiterName, RateLimiterRedis>;

/**
 * Rate limits from the spec's table, counted in Redis so every API instance shares them. If Redis
 * is unreachable an in-memory insurance limiter takes over, so an outage neither blocks every
 * request nor switches limiting off.
 */
export function createLimiters(cfg: Config, redis: Redis, prefix = cfg.redisPrefix): Limiters {
  const make = (name: LimiterName, l: RateLimit) =>
    new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${prefix}:rl:${name}`,
      points: l.points,
      duration: l.durationSec,
      insuranceLimiter: new RateLimiterMemory({ points: l.points, duration: l.durationSec }),
    });
  return {
    login: make('login', cfg.rateLimits.login),
    register: make('register', cfg.rateLimits.register),
    api: make('api', cfg.rateLimits.api),
    webhooks: make('webhooks', cfg.rateLimits.webhooks),
    passwordResetEmail: make('passwordResetEmail', cfg.rateLimits.passwordResetEmail),
    passwordResetIp: make('passwordResetIp', cfg.rateLimits.passwordResetIp),
  };
}

/** Consume one point for key; throws 429 RATE_LIMITED with Retry-After when exhausted. */
export async function consume(limiter: RateLimiterRedis, key: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (res) {
    if (res instanceof RateLimiterRes) throw rateLimited(res.msBeforeNext / 1000);
    throw res;
  }
}

export function limitBy(name: LimiterName, keyOf: (ctx: Context) => string): Middleware {
  return async (ctx, next) => {
    await consume((ctx as unknown as { limiters: Limiters }).limiters[name], keyOf(ctx));
    await next();
  };
}
