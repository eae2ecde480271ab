/**
 * Outbound webhooks through the API and a real worker, to real HTTP receivers
 * (docs/outbound-webhooks.md): every event arrives as documented, signed so that the documented
 * verification code accepts it; retries; ping and redeliver; the SSRF rules at creation and at
 * delivery; tenant isolation.
 */
import dns from 'node:dns';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { reloadConfig } from '../../../shared/config';
import { decryptSecret } from '../../../shared/crypto/secretBox';
import { todayVienna } from '../../../shared/domain/dates';
import { WEBHOOK_EVENT_TYPES } from '../../../shared/domain/outboundWebhooks';
import { runInTransaction } from '../../../shared/outbox';
import { systemActor } from '../../../shared/actor';
import type { CommandContext } from '../../../shared/commands/types';
import { claimU30Upload, countU30Attempt, recordU30Accepted } from '../../../shared/commands/reports/u30Upload';
import { startWorkers, type RunningWorkers } from '../../../workers/worker';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { waitUntil } from '../../helpers/waitUntil';
import { repoRoot } from '../../helpers/processes';
import { bankDelivery, bankEvent, deliver, install } from '../../helpers/webhookFactory';
import { documentedVerifier, startReceiver, type Receiver } from './receiver';

let main: Receiver;
let flaky: Receiver;
let redirecting: Receiver;
let internal: Receiver;
let http: TestClient;
let closeServer: () => Promise<void>;
let server: Awaited<ReturnType<typeof startTestServer>>;
let workers: RunningWorkers;
let verify: Awaited<ReturnType<typeof documentedVerifier>>;
const realLookup = dns.lookup;

beforeAll(async () => {
  [main, flaky, redirecting, internal] = await Promise.all([startReceiver(), startReceiver(), startReceiver(), startReceiver()]);
  // The receivers are on 127.0.0.1: allow-listed, as an on-premises receiver would be. Short retries.
  process.env.OUTBOUND_WEBHOOKS_ALLOW_TARGETS = [main, flaky, redirecting, internal].map((r) => r.hostPort).join(',');
  process.env.OUTBOUND_WEBHOOKS_RETRY_BASE_MS = '100';
  const cfg = reloadConfig();
  server = await startTestServer();
  http = client(server.url);
  closeServer = server.close;
  workers = await startWorkers({ queues: ['outbound-webhooks', 'webhooks'], schedule: false, cfg });
  verify = await documentedVerifier();
  // A resolver of the test's own for names that lead to internal addresses (the guard resolves at
  // delivery time); every other name goes to the system's.
  const fake: Record<string, { address: string; family: number }> = {
    'loopback.test': { address: '127.0.0.1', family: 4 },
    'ten.test': { address: '10.0.0.7', family: 4 },
    'metadata.test': { address: '169.254.169.254', family: 4 },
    'mapped.test': { address: '::ffff:127.0.0.1', family: 6 },
  };
  (dns as { lookup: unknown }).lookup = (host: string, opts: unknown, cb: (...a: unknown[]) => void) => {
    const hit = fake[host];
    if (!hit) return (realLookup as (...a: unknown[]) => void)(host, opts, cb);
    if ((opts as { all?: boolean }).all) cb(null, [hit]);
    else cb(null, hit.address, hit.family);
  };
});
afterAll(async () => {
  (dns as { lookup: unknown }).lookup = realLookup;
  await workers?.close();
  await closeServer?.();
  await Promise.all([main, flaky, redirecting, internal].map((r) => r?.close()));
});

type Team = Awaited<ReturnType<typeof createTeam>>;

async function subscribe(team: Team, url: string, events: string[] = [...WEBHOOK_EVENT_TYPES]) {
  const res = await http.post('/api/webhook-subscriptions', { url, events, description: 'test' }, { token: team.admin.token });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string };
}

const deliveriesOf = async (team: Team, subscriptionId: string) =>
  (await http.get(`/api/webhook-subscriptions/${subscriptionId}/deliveries`, { token: team.admin.token })).body as {
    id: string;
    eventId: string;
    eventType: string;
    status: string;
    attempts: { attempt: number; at: string; ms: number; statusCode: number | null; error: string | null }[];
    attemptCount: number;
    lastError: string | null;
    redeliveryOf: string | null;
  }[];

const settledDeliveries = (team: Team, subscriptionId: string, n: number) =>
  waitUntil(
    async () => {
      const list = await deliveriesOf(team, subscriptionId);
      return list.length >= n && list.every((d) => d.status !== 'pending') ? list : null;
    },
    `${n} deliveries of ${subscriptionId} to settle`,
    30_000,
  );

describe('subscriptions', () => {
  it('create shows the secret once; it is stored encrypted; list and get never show it; only admins manage them', async () => {
    const team = await createTeam();
    const created = await subscribe(team, main.url('/crud'), ['invoice.paid', 'customer.created']);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{40,}$/);
    expect(created).toMatchObject({ url: main.url('/crud'), events: ['invoice.paid', 'customer.created'], active: true, description: 'test' });
    const row = await db()('webhookSubscriptions').where({ id: created.id }).first();
    expect(row.secretEnc).not.toContain(created.secret);
    expect(decryptSecret(row.secretEnc)).toBe(created.secret);

    const list = await http.get('/api/webhook-subscriptions', { token: team.admin.token });
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toContain(created.secret);
    const one = await http.get(`/api/webhook-subscriptions/${created.id}`, { token: team.admin.token });
    expect(one.body.secret).toBeUndefined();

    const put = await http.put(`/api/webhook-subscriptions/${created.id}`, { events: ['invoice.paid'], active: false }, { token: team.admin.token });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ events: ['invoice.paid'], active: false, disabledReason: 'disabled by an admin' });
    const ping = await http.post(`/api/webhook-subscriptions/${created.id}/test`, {}, { token: team.admin.token });
    expect(ping.status).toBe(400);
    const on = await http.put(`/api/webhook-subscriptions/${created.id}`, { active: true }, { token: team.admin.token });
    expect(on.body).toMatchObject({ active: true, disabledAt: null, disabledReason: null });

    for (const role of ['manager', 'member', 'viewer'] as const) {
      const res = await http.post('/api/webhook-subscriptions', { url: main.url(), events: ['invoice.paid'] }, { token: team[role].token });
      expect(res.status).toBe(403);
      expect((await http.get('/api/webhook-subscriptions', { token: team[role].token })).status).toBe(403);
    }
    expect((await http.delete(`/api/webhook-subscriptions/${created.id}`, { token: team.admin.token })).status).toBe(204);
    expect((await http.get(`/api/webhook-subscriptions/${created.id}`, { token: team.admin.token })).status).toBe(404);
  });

  it.each([
    ['http://example.com/hook', 'url', /https/],
    ['https://user:secret@example.com/hook', 'url', /credentials/],
    ['https://127.0.0.1/hook', 'url', /non-public/],
    ['https://10.1.2.3/hook', 'url', /non-public/],
    ['https://169.254.169.254/latest/meta-data/', 'url', /non-public/],
    ['https://100.64.0.1/hook', 'url', /non-public/],
    ['https://[::1]/hook', 'url', /non-public/],
    ['https://[::ffff:10.0.0.1]/hook', 'url', /non-public/],
    ['https://[fd00::1]/hook', 'url', /non-public/],
    ['https://localhost/hook', 'url', /localhost/],
    ['not a url', 'url', /valid URL/],
  ])('refuses %s at creation (400, %s)', async (url, field, message) => {
    const team = await createTeam();
    const res = await http.post('/api/webhook-subscriptions', { url, events: ['invoice.paid'] }, { token: team.admin.token });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_INPUT');
    expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field, message: expect.stringMatching(message) })]));
    expect(await db()('webhookSubscriptions').where({ tenantId: team.tenant.id })).toHaveLength(0);
  });

  it('refuses unknown event names, an empty list and unknown fields (400)', async () => {
    const team = await createTeam();
    for (const body of [
      { url: 'https://hooks.example.com/x', events: ['invoice.exploded'] },
      { url: 'https://hooks.example.com/x', events: [] },
      { url: 'https://hooks.example.com/x', events: ['invoice.paid'], secret: 'mine' },
    ]) {
      const res = await http.post('/api/webhook-subscriptions', body, { token: team.admin.token });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('INVALID_INPUT');
    }
    const created = await subscribe(team, 'https://hooks.example.com/x', ['invoice.paid']);
    const put = await http.put(`/api/webhook-subscriptions/${created.id}`, { url: 'http://hooks.example.com/x' }, { token: team.admin.token });
    expect(put.status).toBe(400);
  });
});

describe('every event, as documented', () => {
  it('arrives with the documented body and a signature the documented code verifies; the object is what the API shows', async () => {
    const team = await createTeam();
    const sub = await subscribe(team, main.url('/all'));
    const admin = { token: team.admin.token };
    const today = todayVienna();

    const customer = (await http.post('/api/customers', { name: 'Webhook Kunde', email: 'kunde@example.com' }, admin)).body;
    const updated = await http.put(`/api/customers/${customer.id}`, { phone: '+43 1 234' }, admin);
    expect(updated.status).toBe(200);
    const items = [{ description: 'Beratung', quantity: '10', unitPrice: '120.00', taxRate: '20' }];
    const invoice = await http.post('/api/invoices', { type: 'rechnung', customerId: customer.id, items }, admin);
    expect(invoice.status).toBe(201);
    expect((await http.post(`/api/invoices/${invoice.body.id}/send`, { to: 'kunde@example.com' }, admin)).status).toBe(202);
    const partial = await http.post(`/api/invoices/${invoice.body.id}/payments`, { amount: '100.00', date: today, method: 'bank_transfer' }, admin);
    expect(partial.status).toBe(201);
    const rest = await http.post(`/api/invoices/${invoice.body.id}/payments`, { amount: '1340.00', date: today, method: 'bank_transfer' }, admin);
    expect(rest.status).toBe(201);
    expect(rest.body.invoice.status).toBe('bezahlt');

    const toCancel = (await http.post('/api/invoices', { type: 'rechnung', customerId: customer.id, items }, admin)).body;
    await http.post(`/api/invoices/${toCancel.id}/send`, { to: 'kunde@example.com' }, admin);
    const cancelled = await http.post(`/api/invoices/${toCancel.id}/cancel`, {}, admin);
    expect(cancelled.status).toBe(200);
    const draft = (await http.post('/api/invoices', { type: 'rechnung', customerId: customer.id, items }, admin)).body;
    expect((await http.delete(`/api/invoices/${draft.id}`, admin)).status).toBe(204);

    const gone = (await http.post('/api/customers', { name: 'Bald weg' }, admin)).body;
    expect((await http.delete(`/api/customers/${gone.id}`, admin)).status).toBe(204);

    const supplier = (await http.post('/api/suppliers', { name: 'Lieferant GmbH' }, admin)).body;
    const incoming = await http.post(
      '/api/invoices',
      {
        type: 'eingangsrechnung',
        supplierId: supplier.id,
        invoiceNumber: 'ER-1',
        invoiceDate: today,
        items: [{ description: 'Papier', quantity: '1', unitPrice: '50.00', taxRate: '20' }],
      },
      admin,
    );
    expect(incoming.status).toBe(201);

    const [submission] = await db()('reportSubmissions')
      .insert({ tenantId: team.tenant.id, kind: 'u30', year: 2026, period: '2026-03', mode: 'live', status: 'submitted', outcomeUnknown: true })
      .returning('id');
    const resolved = await http.post(`/api/reports/ust/submissions/${submission.id}/resolve`, { outcome: 'accepted' }, admin);
    expect(resolved.status).toBe(200);

    const expected: Record<string, number> = {
      'customer.created': 2,
      'customer.updated': 1,
      'customer.deleted': 1,
      // Three invoices and the Storno credit note.
      'invoice.created': 4,
      'invoice.finalized': 2,
      'invoice.partially_paid': 1,
      'invoice.paid': 1,
      'payment.recorded': 2,
      'invoice.cancelled': 1,
      'invoice.deleted': 1,
      'incoming_invoice.created': 1,
      'report.submission.updated': 1,
    };
    const total = Object.values(expected).reduce((a, b) => a + b, 0);
    const mine = () => main.received.filter((r) => r.path === '/all');
    await waitUntil(async () => mine().length >= total, `${total} events at the receiver`, 30_000);
    const got = mine();
    const counts: Record<string, number> = {};
    for (const r of got) counts[r.body.type] = (counts[r.body.type] ?? 0) + 1;
    expect(counts).toEqual(expected);
    expect(Object.keys(counts).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());

    for (const r of got) {
      expect(Object.keys(r.body).sort()).toEqual(['createdAt', 'data', 'id', 'tenantId', 'type']);
      expect(Object.keys(r.body.data)).toEqual(['object']);
      expect(r.body.tenantId).toBe(team.tenant.id);
      expect(new Date(r.body.createdAt).toISOString()).toBe(r.body.createdAt);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['x-webhook-id']).toBe(r.body.id);
      expect(r.headers['x-webhook-event']).toBe(r.body.type);
      expect(r.headers['x-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verify(r.raw, r.headers['x-signature'] as string, sub.secret)).toBe(true);
      // Any change to the body or another secret fails the documented check.
      expect(verify(r.raw.replace('"data"', '"data" '), r.headers['x-signature'] as string, sub.secret)).toBe(false);
      expect(verify(r.raw, r.headers['x-signature'] as string, 'whsec_another')).toBe(false);
    }
    expect(new Set(got.map((r) => r.body.id)).size).toBe(got.length);

    const one = (type: string, pred: (o: Record<string, unknown>) => boolean = () => true) => {
      const hits = got.filter((r) => r.body.type === type && pred(r.body.data.object));
      expect(hits, type).toHaveLength(1);
      return hits[0].body.data.object;
    };
    const byId = (id: string) => (o: Record<string, unknown>) => o.id === id;
    // The object is the API's representation of the resource at the event.
    expect(one('customer.created', byId(customer.id))).toEqual(customer);
    expect(one('customer.updated')).toEqual(updated.body);
    expect(one('customer.updated')).toEqual((await http.get(`/api/customers/${customer.id}`, admin)).body);
    expect(one('customer.deleted')).toMatchObject({ id: gone.id, name: 'Bald weg', deletedAt: expect.any(String) });
    expect(one('invoice.created', byId(invoice.body.id))).toEqual(invoice.body);
    expect(one('invoice.finalized', byId(invoice.body.id))).toMatchObject({ id: invoice.body.id, status: 'offen', number: expect.any(String) });
    expect(one('invoice.partially_paid')).toEqual(partial.body.invoice);
    expect(one('invoice.paid')).toEqual(rest.body.invoice);
    expect(one('invoice.paid')).toEqual((await http.get(`/api/invoices/${invoice.body.id}`, admin)).body);
    expect(one('payment.recorded', byId(partial.body.payment.id))).toEqual({ ...partial.body.payment, invoiceId: invoice.body.id });
    expect(one('payment.recorded', byId(rest.body.payment.id))).toEqual({ ...rest.body.payment, invoiceId: invoice.body.id });
    expect(one('invoice.cancelled')).toEqual(cancelled.body.invoice);
    expect(one('invoice.created', byId(cancelled.body.creditNote.id))).toMatchObject({ type: 'gutschrift', relatedInvoiceId: toCancel.id });
    expect(one('invoice.deleted')).toMatchObject({ id: draft.id, status: 'entwurf' });
    expect(one('incoming_invoice.created')).toEqual(incoming.body);
    expect(one('report.submission.updated')).toEqual(resolved.body);

    const deliveries = await settledDeliveries(team, sub.id, total);
    expect(deliveries.every((d) => d.status === 'delivered' && d.attempts.length === 1 && d.attempts[0].statusCode === 204)).toBe(true);
  });

  it('a payment booked by the payment pipeline (a bank webhook) is an incoming invoice, paid, with its payment', async () => {
    const team = await createTeam();
    const sub = await subscribe(team, main.url('/pipeline'), ['incoming_invoice.created', 'invoice.paid', 'payment.recorded']);
    const { path: hookPath } = await install(server.url, team.admin.token, 'bank', { webhookSecret: 'bank-secret-0123456789abcdef' });
    const delivered = bankDelivery('bank-secret-0123456789abcdef', bankEvent({ amount: '99.90' }));
    expect((await deliver(server.url, hookPath, delivered.body, delivered.headers)).status).toBe(200);

    await waitUntil(async () => main.received.filter((r) => r.path === '/pipeline').length >= 3, 'the pipeline events', 30_000);
    const got = main.received.filter((r) => r.path === '/pipeline');
    expect(got.map((r) => r.body.type).sort()).toEqual(['incoming_invoice.created', 'invoice.paid', 'payment.recorded']);
    const invoiceId = got.find((r) => r.body.type === 'invoice.paid')!.body.data.object.id as string;
    const shown = (await http.get(`/api/invoices/${invoiceId}`, { token: team.admin.token })).body;
    expect(shown).toMatchObject({ type: 'eingangsrechnung', status: 'bezahlt', totalGross: '99.90' });
    expect(got.find((r) => r.body.type === 'invoice.paid')!.body.data.object).toEqual(shown);
    expect(got.find((r) => r.body.type === 'incoming_invoice.created')!.body.data.object).toMatchObject({ id: invoiceId });
    expect(got.find((r) => r.body.type === 'payment.recorded')!.body.data.object).toEqual({ ...shown.payments[0], invoiceId });
    for (const r of got) expect(verify(r.raw, r.headers['x-signature'] as string, sub.secret)).toBe(true);
  });

  it('the U30 job’s transitions are report.submission.updated events; an attempt counted is none', async () => {
    const team = await createTeam();
    const sub = await subscribe(team, main.url('/u30'), ['report.submission.updated']);
    const [row] = await db()('reportSubmissions')
      .insert({ tenantId: team.tenant.id, kind: 'u30', year: 2026, period: '2026-04', mode: 'test', status: 'queued', payload: Buffer.from('<x/>') })
      .returning('id');
    const run = <T>(command: (ctx: CommandContext) => Promise<T>) => runInTransaction((trx) => command({ trx, actor: systemActor(team.tenant.id) }));
    await run((ctx) => countU30Attempt(ctx, row.id));
    expect(await run((ctx) => claimU30Upload(ctx, row.id, 'test'))).toEqual({ claimed: true });
    await run((ctx) => recordU30Accepted(ctx, row.id, { rc: 0 }));

    await waitUntil(async () => main.received.filter((r) => r.path === '/u30').length >= 2, 'two submission events');
    await settledDeliveries(team, sub.id, 2);
    const got = main.received.filter((r) => r.path === '/u30');
    expect(got.map((r) => r.body.data.object.status)).toEqual(['submitted', 'accepted']);
    expect(got[1].body.data.object).toEqual((await http.get(`/api/reports/ust/submissions/${row.id}`, { token: team.admin.token })).body);
  });

  it('a refused change writes no event: the event is in the transaction that caused it', async () => {
    const team = await createTeam();
    await subscribe(team, main.url('/refused'), ['payment.recorded', 'invoice.paid', 'customer.deleted']);
    const admin = { token: team.admin.token };
    const customer = (await http.post('/api/customers', { name: 'Zahlt zu viel' }, admin)).body;
    const items = [{ description: 'Beratung', quantity: '1', unitPrice: '100.00', taxRate: '20' }];
    const invoice = (await http.post('/api/invoices', { type: 'rechnung', customerId: customer.id, items }, admin)).body;
    expect((await http.post(`/api/invoices/${invoice.id}/send`, { to: 'kunde@example.com' }, admin)).status).toBe(202);
    const tooMuch = await http.post(`/api/invoices/${invoice.id}/payments`, { amount: '500.00', date: todayVienna(), method: 'cash' }, admin);
    expect(tooMuch.status).toBe(422);
    // An open invoice keeps its customer (400 DEPENDENCY).
    expect((await http.delete(`/api/customers/${customer.id}`, admin)).status).toBe(400);
    expect(await db()('outboundEvents').where({ tenantId: team.tenant.id })).toHaveLength(0);
    expect(await db()('payments').where({ tenantId: team.tenant.id })).toHaveLength(0);
  });

  it('a receiver failing twice gets the same event a third time and the delivery records all three attempts', async () => {
    const team = await createTeam();
    const sub = await subscribe(team, flaky.url('/flaky'), ['customer.created']);
    flaky.answers.push({ status: 500, body: 'down' }, { status: 503 });
    const customer = (await http.post('/api/customers', { name: 'Dreimal' }, { token: team.admin.token })).body;

    const [delivery] = await settledDeliveries(team, sub.id, 1);
    expect(delivery.status).toBe('delivered');
    expect(delivery.attempts.map((a) => a.statusCode)).toEqual([500, 503, 204]);
    expect(delivery.attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(delivery.attempts[0]).toMatchObject({ error: 'HTTP 500', responseBody: 'down' });
    for (const a of delivery.attempts) {
      expect(a.ms).toBeGreaterThanOrEqual(0);
      expect(Number.isNaN(Date.parse(a.at))).toBe(false);
    }
    const arrived = flaky.received.filter((r) => r.path === '/flaky');
    expect(arrived).toHaveLength(3);
    expect(new Set(arrived.map((r) => r.raw)).size).toBe(1);
    expect(arrived[0].body).toMatchObject({ type: 'customer.created', data: { object: { id: customer.id } } });
    for (const r of arrived) expect(verify(r.raw, r.headers['x-signature'] as string, sub.secret)).toBe(true);
  });

  it('test sends a ping; redeliver sends the same event again as a new delivery', async () => {
    const team = await createTeam();
    const sub = await subscribe(team, main.url('/ping'), ['customer.created']);
    const ping = await http.post(`/api/webhook-subscriptions/${sub.id}/test`, {}, { token: team.admin.token });
    expect(ping.status).toBe(202);
    expect(ping.body).toMatchObject({ eventType: 'ping', status: 'pending', subscriptionId: sub.id });
    await waitUntil(async () => main.received.some((r) => r.path === '/ping' && r.body.type === 'ping'), 'the ping');
    const pinged = main.received.find((r) => r.path === '/ping' && r.body.type === 'ping')!;
    expect(pinged.body.data.object).toMatchObject({ id: sub.id, url: main.url('/ping') });
    expect(pinged.body.data.object.secret).toBeUndefined();
    expect(verify(pinged.raw, pinged.headers['x-signature'] as string, sub.secret)).toBe(true);

    await http.post('/api/customers', { name: 'Nochmal' }, { token: team.admin.token });
    const settled = await settledDeliveries(team, sub.id, 2);
    const first = settled.find((d) => d.eventType === 'customer.created')!;
    const again = await http.post(`/api/webhook-subscriptions/${sub.id}/deliveries/${first.id}/redeliver`, {}, { token: team.admin.token });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ eventId: first.eventId, redeliveryOf: first.id, status: 'pending', attempts: [] });
    expect(again.body.id).not.toBe(first.id);
    await waitUntil(async () => main.received.filter((r) => r.path === '/ping' && r.body.id === first.eventId).length === 2, 'the redelivery');
    const both = main.received.filter((r) => r.path === '/ping' && r.body.id === first.eventId);
    expect(both[1].raw).toBe(both[0].raw);
    expect(both[1].headers['x-webhook-delivery']).toBe(again.body.id);
  });
});

describe('SSRF at delivery time', () => {
  it.each([
    ['loopback.test', '127.0.0.1'],
    ['ten.test', '10.0.0.7'],
    ['metadata.test', '169.254.169.254'],
    ['mapped.test', '::ffff:127.0.0.1'],
  ])('a name resolving to an internal address (%s → %s) is refused after DNS, and nothing is sent', async (host, address) => {
    const team = await createTeam();
    // The URL alone shows nothing wrong: accepted at creation.
    const sub = await subscribe(team, `https://${host}:${internal.port}/steal`, ['customer.created']);
    await http.post('/api/customers', { name: 'SSRF' }, { token: team.admin.token });
    const [d] = await settledDeliveries(team, sub.id, 1);
    expect(d.status).toBe('failed');
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0].statusCode).toBeNull();
    expect(d.lastError).toMatch(/target refused/);
    expect(d.lastError).toContain(address);
    expect(internal.received.filter((r) => r.path === '/steal')).toHaveLength(0);
  });

  it('a redirect to an internal address is not followed', async () => {
    const team = await createTeam();
    redirecting.answers.push({ status: 302, headers: { location: internal.url('/redirected') } });
    const sub = await subscribe(team, redirecting.url('/redirect'), ['customer.created']);
    await http.post('/api/customers', { name: 'Umleitung' }, { token: team.admin.token });
    const d = await waitUntil(async () => (await deliveriesOf(team, sub.id)).find((x) => x.status === 'delivered'), 'the retry after the redirect', 30_000);
    expect(d.attempts[0]).toMatchObject({
      statusCode: 302,
      error: expect.stringMatching(/redirect not followed.*Location: http:\/\/127\.0\.0\.1:\d+\/redirected/),
    });
    expect(internal.received.filter((r) => r.path === '/redirected')).toHaveLength(0);
  });
});

describe('the documented verification code', () => {
  it('the README shows the same function as docs/outbound-webhooks.md (which the tests run)', () => {
    const fn = (text: string) => /export function verifyWebhook[\s\S]*?\n}\n/.exec(text)?.[0];
    const doc = fn(readFileSync(path.join(repoRoot, 'docs/outbound-webhooks.md'), 'utf8'));
    expect(doc).toBeDefined();
    expect(fn(readFileSync(path.join(repoRoot, 'README.md'), 'utf8'))).toBe(doc);
  });
});

describe('tenant isolation', () => {
  it("another tenant's admin sees, changes and triggers nothing of a subscription; events stay in their tenant", async () => {
    const a = await createTeam();
    const b = await createTeam();
    const sub = await subscribe(a, main.url('/iso-a'), ['customer.created']);
    await http.post('/api/customers', { name: 'A' }, { token: a.admin.token });
    const [delivery] = await settledDeliveries(a, sub.id, 1);
    const other = { token: b.admin.token };
    expect((await http.get(`/api/webhook-subscriptions/${sub.id}`, other)).status).toBe(404);
    expect((await http.put(`/api/webhook-subscriptions/${sub.id}`, { active: false }, other)).status).toBe(404);
    expect((await http.get(`/api/webhook-subscriptions/${sub.id}/deliveries`, other)).status).toBe(404);
    expect((await http.post(`/api/webhook-subscriptions/${sub.id}/test`, {}, other)).status).toBe(404);
    expect((await http.post(`/api/webhook-subscriptions/${sub.id}/deliveries/${delivery.id}/redeliver`, {}, other)).status).toBe(404);
    expect((await http.delete(`/api/webhook-subscriptions/${sub.id}`, other)).status).toBe(404);
    expect((await http.get('/api/webhook-subscriptions', other)).body).toEqual([]);
    // b's own subscription cannot redeliver a's delivery either.
    const subB = await subscribe(b, main.url('/iso-b'), ['customer.created']);
    expect((await http.post(`/api/webhook-subscriptions/${subB.id}/deliveries/${delivery.id}/redeliver`, {}, other)).status).toBe(404);

    await http.post('/api/customers', { name: 'B' }, other);
    await settledDeliveries(b, subB.id, 1);
    expect(main.received.filter((r) => r.path === '/iso-a').map((r) => r.body.tenantId)).toEqual([a.tenant.id]);
    expect(main.received.filter((r) => r.path === '/iso-b').map((r) => r.body.tenantId)).toEqual([b.tenant.id]);
    expect((await http.get(`/api/webhook-subscriptions/${sub.id}`, { token: a.admin.token })).body.active).toBe(true);
  });
});
