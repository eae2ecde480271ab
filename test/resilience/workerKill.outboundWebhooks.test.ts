import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { db } from '../../shared/db';
import { reloadConfig } from '../../shared/config';
import { startTestServer } from '../helpers/server';
import { client, type TestClient } from '../helpers/http';
import { createTeam } from '../helpers/factories';
import { exitOf } from '../helpers/processes';
import { sigkillTree, waitUntil } from './faults';
import { startWorkerProcess } from './workerKill';
import { documentedVerifier, startReceiver, type Receiver } from '../api/webhookSubscriptions/receiver';

/**
 * Outbound webhooks are at least once (docs/outbound-webhooks.md): a worker SIGKILLed while the
 * receiver holds the request unanswered leaves the delivery pending; the job, found stalled, runs
 * on another worker and the event arrives again, the same event id and body, and is recorded
 * delivered. No event is lost.
 */
let receiver: Receiver;
let http: TestClient;
let closeServer: () => Promise<void>;
const started: ChildProcess[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
  // Inherited by the worker processes (spawnEntry passes this process's environment).
  process.env.OUTBOUND_WEBHOOKS_ALLOW_TARGETS = receiver.hostPort;
  process.env.OUTBOUND_WEBHOOKS_RETRY_BASE_MS = '100';
  reloadConfig();
  const server = await startTestServer();
  http = client(server.url);
  closeServer = server.close;
});
afterEach(async () => {
  for (const c of started.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGTERM');
      await exitOf(c);
    }
  }
});
afterAll(async () => {
  await closeServer?.();
  await receiver?.close();
});

const worker = async () => {
  const w = await startWorkerProcess();
  started.push(w);
  return w;
};

describe('worker SIGKILLed during a webhook delivery', () => {
  it('killed while the receiver holds the request: another worker delivers the same event, recorded once as delivered', async () => {
    const team = await createTeam();
    const sub = (await http.post('/api/webhook-subscriptions', { url: receiver.url('/kill'), events: ['customer.created'] }, { token: team.admin.token })).body;
    receiver.answers.push('hold');
    const customer = (await http.post('/api/customers', { name: 'Überlebt' }, { token: team.admin.token })).body;
    const delivery = await waitUntil(async () => db()('webhookDeliveries').where({ subscriptionId: sub.id }).first(), 'the delivery row');

    const first = await worker();
    await waitUntil(async () => receiver.received.filter((r) => r.path === '/kill').length === 1, 'the receiver to hold the first request', 60_000, 50);
    await sigkillTree(first);
    receiver.releaseHeld();
    expect((await db()('webhookDeliveries').where({ id: delivery.id }).first()).status).toBe('pending');

    await worker();
    const row = await waitUntil(
      async () => {
        const d = await db()('webhookDeliveries').where({ id: delivery.id }).first();
        return d.status === 'delivered' ? d : null;
      },
      'the delivery to be delivered by the second worker',
      60_000,
      200,
    );
    expect(row.attemptCount).toBeGreaterThanOrEqual(1);
    const arrived = receiver.received.filter((r) => r.path === '/kill');
    expect(arrived.length).toBeGreaterThanOrEqual(2);
    expect(new Set(arrived.map((r) => r.body.id)).size).toBe(1);
    expect(new Set(arrived.map((r) => r.raw)).size).toBe(1);
    expect(arrived[0].body).toMatchObject({ type: 'customer.created', tenantId: team.tenant.id, data: { object: { id: customer.id } } });
    const verify = await documentedVerifier();
    for (const r of arrived) expect(verify(r.raw, r.headers['x-signature'] as string, sub.secret)).toBe(true);
  }, 120_000);
});
