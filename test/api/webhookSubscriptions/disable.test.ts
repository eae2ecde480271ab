/**
 * A subscription whose deliveries fail for the whole 3-day window is disabled and its tenant's
 * admins are e-mailed (docs/outbound-webhooks.md, "Retries"). The 3 days pass on the injected
 * clock (shared/clock.ts); the worker runs in this process, so it reads the same clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { reloadConfig } from '../../../shared/config';
import { advanceClock, resetClock } from '../../../shared/clock';
import { RETRY_WINDOW_MS } from '../../../shared/domain/outboundWebhooks';
import { startWorkers, type RunningWorkers } from '../../../workers/worker';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam, createUser } from '../../helpers/factories';
import { waitUntil } from '../../helpers/waitUntil';
import { startFakeSmtp, type FakeSmtp } from '../../helpers/fakeSmtp';
import { startReceiver, type Receiver } from './receiver';

let down: Receiver;
let smtp: FakeSmtp;
let http: TestClient;
let closeServer: () => Promise<void>;
let workers: RunningWorkers;

beforeAll(async () => {
  down = await startReceiver({ status: 500, body: 'maintenance' });
  smtp = await startFakeSmtp();
  process.env.OUTBOUND_WEBHOOKS_ALLOW_TARGETS = down.hostPort;
  process.env.OUTBOUND_WEBHOOKS_RETRY_BASE_MS = '100';
  process.env.SMTP_URL = smtp.url;
  const cfg = reloadConfig();
  const server = await startTestServer();
  http = client(server.url);
  closeServer = server.close;
  workers = await startWorkers({ queues: ['outbound-webhooks', 'email'], schedule: false, sandbox: false, cfg });
});
afterAll(async () => {
  resetClock();
  await workers?.close();
  await closeServer?.();
  await down?.close();
  await smtp?.close();
});

describe('3 days of failures', () => {
  it('fail the delivery, disable the subscription and e-mail the active admins; later events are not delivered', async () => {
    const team = await createTeam();
    const second = await createUser(team.tenant, 'admin');
    const inactive = await createUser(team.tenant, 'admin', { active: false });
    const admin = { token: team.admin.token };
    const sub = (await http.post('/api/webhook-subscriptions', { url: down.url('/down'), events: ['customer.created'] }, admin)).body;
    await http.post('/api/customers', { name: 'Nie zugestellt' }, admin);

    // Retried while the window lasts: pending, failing since the first attempt.
    const delivery = await waitUntil(async () => (await db()('webhookDeliveries').where({ subscriptionId: sub.id }).first()) ?? null, 'the delivery row');
    await waitUntil(async () => (await db()('webhookDeliveries').where({ id: delivery.id }).first()).attemptCount >= 2, 'two failed attempts');
    const during = (await http.get(`/api/webhook-subscriptions/${sub.id}`, admin)).body;
    expect(during).toMatchObject({ active: true, failingSince: expect.any(String) });
    expect((await db()('webhookDeliveries').where({ id: delivery.id }).first()).status).toBe('pending');

    advanceClock(RETRY_WINDOW_MS + 60_000);
    const disabled = await waitUntil(async () => {
      const s = (await http.get(`/api/webhook-subscriptions/${sub.id}`, admin)).body;
      return s.active === false ? s : null;
    }, 'the subscription to be disabled');
    expect(disabled).toMatchObject({ disabledAt: expect.any(String), disabledReason: 'every delivery failed for 3 days' });
    const [d] = (await http.get(`/api/webhook-subscriptions/${sub.id}/deliveries`, admin)).body;
    expect(d).toMatchObject({ status: 'failed', lastStatusCode: 500, lastError: 'HTTP 500', failedAt: expect.any(String) });
    expect(d.attempts.length).toBeGreaterThanOrEqual(3);
    expect(d.attempts.every((a: { statusCode: number }) => a.statusCode === 500)).toBe(true);

    const mail = await waitUntil(async () => smtp.received.find((m) => m.raw.includes(sub.id)), 'the notice to the admins');
    expect([...mail.to].sort()).toEqual([team.admin.email, second.email].sort());
    expect(mail.to).not.toContain(inactive.email);
    expect(mail.raw).toMatch(/Subject: Webhook subscription disabled/);
    expect(mail.raw).toContain(down.url('/down'));
    expect(mail.raw).toContain('HTTP 500');

    // Disabled: a new event makes no delivery; nothing more reaches the receiver.
    const before = down.received.length;
    await http.post('/api/customers', { name: 'Nach der Abschaltung' }, admin);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await db()('webhookDeliveries').where({ subscriptionId: sub.id })).toHaveLength(1);
    expect(down.received.length).toBe(before);
    expect(smtp.received.filter((m) => m.raw.includes(sub.id))).toHaveLength(1);

    // Enabled again by an admin: failure state cleared, events flow again.
    const on = (await http.put(`/api/webhook-subscriptions/${sub.id}`, { active: true }, admin)).body;
    expect(on).toMatchObject({ active: true, failingSince: null, disabledAt: null, disabledReason: null });
  });
});
