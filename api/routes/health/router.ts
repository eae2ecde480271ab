import { createRouter } from '../../routing';
import { db } from '../../../shared/db';
import { producerRedis, redisReady } from '../../../shared/redis';
import { withTimeout } from '../../../shared/timeout';

const check = { type: 'string', enum: ['ok', 'down'] } as const;
const readiness = {
  type: 'object',
  required: ['status', 'checks'],
  properties: {
    status: { type: 'string', enum: ['ready', 'not_ready'] },
    checks: { type: 'object', required: ['postgres', 'redis'], properties: { postgres: check, redis: check } },
  },
} as const;

/** Liveness and readiness for load balancers and orchestrators. */
export const { router: healthRouter, add } = createRouter('', 'Operations');

add({
  method: 'get',
  path: '/health',
  auth: 'public',
  summary: 'Liveness: the process is up',
  responses: { 200: { description: 'Alive', schema: { type: 'object', properties: { status: { const: 'ok' } } } } },
  handler: (ctx) => {
    ctx.body = { status: 'ok' };
  },
});

add({
  method: 'get',
  path: '/ready',
  auth: 'public',
  summary: 'Readiness: PostgreSQL and Redis answer',
  responses: {
    200: { description: 'Ready', schema: readiness },
    503: { description: 'A dependency is down; the body says which (not the error envelope: a load balancer reads it)', schema: readiness },
  },
  handler: async (ctx) => {
    const [pgRes, redisRes] = await Promise.allSettled([
      withTimeout(db().raw('select 1'), 2000),
      withTimeout(
        redisReady(producerRedis(), 1000).then(() => producerRedis().ping()),
        2000,
      ),
    ]);
    const checks = {
      postgres: pgRes.status === 'fulfilled' ? 'ok' : 'down',
      redis: redisRes.status === 'fulfilled' ? 'ok' : 'down',
    };
    const ready = checks.postgres === 'ok' && checks.redis === 'ok';
    ctx.status = ready ? 200 : 503;
    if (!ready) ctx.set('Retry-After', '5');
    ctx.body = { status: ready ? 'ready' : 'not_ready', checks };
  },
});
