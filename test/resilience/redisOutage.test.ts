import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { spawnEntry, waitForOutput, exitOf } from '../helpers/processes';
import { freePort } from '../../scripts/services';
import { createTeam } from '../helpers/factories';
import { createCustomer, createDraftInvoice } from '../helpers/invoiceFactory';
import { startFakeSmtp, type FakeSmtp } from '../helpers/fakeSmtp';
import { db } from '../../shared/db';
import { bounded, isEnvelope, restartableRedis, waitUntil, type RestartableServer } from './faults';
import { uniqueEmail } from '../api/auth/authHelpers';
import { deliver, install, stripeDelivery, stripePaymentEvent, waitForLogRows } from '../helpers/webhookFactory';

/**
 * Redis dies while a real API process serves (its own redis-server, the run's PostgreSQL).
 * PostgreSQL-only work goes on; work that needs the queue answers 503 + Retry-After at once or is
 * parked in the outbox; readiness says redis is down; rate limiting falls back to memory. When
 * Redis is back on the same port, the API reconnects by itself and a worker relays the outbox.
 * Webhook deliveries never need Redis to be answered: stored during the outage, processed after it
 * by the worker that was running all along.
 */
let redis: RestartableServer;
let smtp: FakeSmtp;
let api: ChildProcess & { output: () => string };
let worker: (ChildProcess & { output: () => string }) | undefined;
let base: string;

beforeAll(async () => {
  redis = await restartableRedis();
  smtp = await startFakeSmtp();
  const port = await freePort();
  api = spawnEntry('api/server.ts', {
    PORT: String(port),
    HOST: '127.0.0.1',
    REDIS_URL: redis.url,
    // Small enough to reach during the outage; the memory insurance limiter must enforce it.
    RATE_LIMIT_REGISTER_POINTS: '3',
    RENDER_WAIT_MS: '3000',
  });
  base = `http://127.0.0.1:${port}`;
  await waitForOutput(api, /API listening/);
});

afterAll(async () => {
  for (const p of [worker, api]) {
    if (p && p.exitCode === null) {
      p.kill('SIGTERM');
      await exitOf(p);
    }
  }
  await redis?.stop();
  await smtp?.close();
});

describe('Redis stops while the API serves', () => {
  it('CRUD keeps working, queue work is refused with 503 or parked in the outbox, and all of it resumes when Redis returns', async () => {
    const { tenant, admin } = await createTeam();
    const customer = await createCustomer(tenant, { email: 'kunde@example.at' });
    const draft = await createDraftInvoice(tenant, admin, { customerId: customer.id });
    expect((await bounded(base, 'GET', '/ready')).status).toBe(200);

    await redis.stop();

    // Readiness names the dependency; liveness does not depend on it.
    const ready = await bounded(base, 'GET', '/ready');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe('5');
    expect(ready.body).toEqual({ status: 'not_ready', checks: { postgres: 'ok', redis: 'down' } });
    expect((await bounded(base, 'GET', '/health')).status).toBe(200);

    // PostgreSQL-only work is unaffected (every call is bounded: a hang fails the test).
    const t = admin.token;
    const created = await bounded(base, 'POST', '/api/customers', { token: t, body: { name: 'Während des Ausfalls GmbH', email: 'ausfall@example.at' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const inv = await bounded(base, 'POST', '/api/invoices', {
      token: t,
      body: { type: 'rechnung', customerId: created.body.id, items: [{ description: 'Beratung', quantity: 2, unit: 'h', unitPrice: '100.00', taxRate: '20' }] },
    });
    expect(inv.status, JSON.stringify(inv.body)).toBe(201);
    expect((await bounded(base, 'GET', `/api/invoices/${inv.body.id}`, { token: t })).body.totalGross).toBe('240.00');
    const list = await bounded(base, 'GET', '/api/invoices?status=entwurf', { token: t });
    expect(list.status).toBe(200);
    expect(list.body.data.map((i: { id: string }) => i.id).sort()).toEqual([draft.id, inv.body.id].sort());
    expect((await bounded(base, 'GET', '/api/customers', { token: t })).status).toBe(200);

    // A document that is not rendered yet needs the queue: 503 + Retry-After, quickly.
    const pdf = await bounded(base, 'GET', `/api/invoices/${draft.id}/pdf`, { token: t });
    expect(pdf.status).toBe(503);
    expect(isEnvelope(pdf)).toBe(true);
    expect(pdf.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(Number(pdf.headers.get('retry-after'))).toBeGreaterThan(0);

    // Send commits the state change and an outbox row; relaying after commit fails quietly, so
    // the client gets its 202 and the e-mail job waits in the outbox (what sendInvoice promises).
    const sent = await bounded(base, 'POST', `/api/invoices/${draft.id}/send`, { token: t, body: {} });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    expect(sent.body.invoice.status).toBe('offen');
    const deliveryId = sent.body.delivery.id as string;
    const parked = await db()('outbox')
      .where({ prefix: process.env.REDIS_PREFIX, jobId: `email-${deliveryId}` })
      .first();
    expect(parked).toMatchObject({ queue: 'email', enqueuedAt: null });

    // Rate limiting does not switch off: the in-memory insurance limiter counts (3 per window).
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await bounded(base, 'POST', '/api/auth/register', {
        body: { email: uniqueEmail('outage'), password: 'a-long-enough-password', name: 'Rita Redis', companyName: 'Ausfall GmbH' },
      });
      statuses.push(r.status);
      if (r.status === 429) {
        expect(isEnvelope(r)).toBe(true);
        expect(r.body.error.code).toBe('RATE_LIMITED');
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    }
    expect(statuses).toEqual([201, 201, 201, 429]);

    // Redis returns on the same port: the API reconnects on its own…
    await redis.start();
    await waitUntil(async () => (await bounded(base, 'GET', '/ready')).status === 200, '/ready to turn green', 15_000, 250);

    // …and a worker's periodic outbox relay hands the parked e-mail job to BullMQ: sent once.
    worker = spawnEntry('workers/index.ts', { REDIS_URL: redis.url, SMTP_URL: smtp.url });
    const row = await waitUntil(
      async () => {
        const d = await db()('deliveries').where({ id: deliveryId }).first();
        return ['sent', 'failed'].includes(d.status) ? d : null;
      },
      'the parked e-mail to be delivered',
      30_000,
      200,
    );
    expect(row.status).toBe('sent');
    expect(smtp.received.filter((m) => m.raw.includes(`delivery-${deliveryId}@`))).toHaveLength(1);
    expect((await db()('outbox').where({ id: parked.id }).first()).enqueuedAt).not.toBeNull();

    // Rendering works again (the worker renders, the API waits for it).
    const again = await bounded(base, 'GET', `/api/invoices/${draft.id}/pdf`, { token: t, boundMs: 20_000 });
    expect(again.status).toBe(200);
    expect(again.headers.get('content-type')).toMatch(/application\/pdf/);
  }, 120_000);

  it('webhook deliveries are stored and answered 200 while Redis is down, and the running worker processes them when it returns', async () => {
    const secret = 'whsec_outage';
    const { tenant, admin } = await createTeam();
    const { path } = await install(base, admin.token, 'stripe', { webhookSecret: secret });
    // The worker from the test above runs through this outage (started here if that one failed early).
    worker ??= spawnEntry('workers/index.ts', { REDIS_URL: redis.url, SMTP_URL: smtp.url });
    await waitForOutput(worker, /workers started/);

    await redis.stop();
    const events = [stripePaymentEvent(), stripePaymentEvent()];
    for (const event of events) {
      const { body, headers } = stripeDelivery(secret, event);
      const res = await deliver(base, path, body, headers);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ received: true, status: 'pending' });
    }
    // Stored with their jobs' outbox rows, which nobody could hand to Redis.
    const rows = await db()('webhookEvents').where({ tenantId: tenant.id });
    expect(rows.map((r) => r.status)).toEqual(['pending', 'pending']);
    const parked = await db()('outbox').whereIn(
      'jobId',
      rows.map((r) => `webhook-${r.id}`),
    );
    expect(parked.map((o) => o.enqueuedAt)).toEqual([null, null]);

    // Redis returns: the worker reconnects by itself and its relay sends both; one invoice each.
    await redis.start();
    const done = await waitForLogRows(tenant.id, 'stripe', 2, 30_000);
    expect(done.map((r) => r.status)).toEqual(['processed', 'processed']);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(2);
  }, 120_000);
});
