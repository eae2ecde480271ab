import { afterAll, afterEach, beforeAll } from 'vitest';
import { startTestServer } from './server';
import { startWorkers, type RunningWorkers } from '../../workers/worker';
import { createHmac, randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { expect } from 'vitest';
import { db } from '../../shared/db';
import { signBankPayload } from '../../shared/providers/payments';
import { mapBankEvent } from '../../shared/providers/payments/bank';
import { getQueue, QUEUES } from '../../shared/queues';
import { client } from './http';
import type { PaypalTestCert } from './paypalCerts';
import { signPaypalDelivery } from './paypalCerts';

/** Helpers for the webhook tests: install through the API, sign real-format deliveries, wait for the job. */

/** The events themselves are built in code (./providerEvents). */
export {
  molliePaymentBody,
  mollieRefundBody,
  paypalCaptureEvent,
  paypalRefundEvent,
  stripeCurrentRefundEvent,
  stripeFailedEvent,
  stripePaymentEvent,
  stripeRefundEvent,
} from './providerEvents';

const stripeSdk = new Stripe('sk_test_webhooks');
export const suffix = () => randomBytes(6).toString('hex');

export interface Installed {
  webhookUrl: string;
  token: string;
  /** Path part of the webhook URL, to call on the test server. */
  path: string;
}

export async function install(baseUrl: string, adminToken: string, slug: string, secrets: Record<string, string>): Promise<Installed> {
  const res = await client(baseUrl, { token: adminToken }).post(`/api/connectors/${slug}/install`, secrets);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { ...res.body, path: new URL(res.body.webhookUrl).pathname };
}

export async function deliver(baseUrl: string, path: string, body: string | Buffer, headers: Record<string, string>) {
  return client(baseUrl).request('POST', path, { rawBody: body, headers });
}

/** A Stripe delivery, signed with the official SDK's generateTestHeaderString. */
export function stripeDelivery(secret: string, event: object, timestamp?: number) {
  const body = JSON.stringify(event);
  const header = stripeSdk.webhooks.generateTestHeaderString({ payload: body, secret, ...(timestamp ? { timestamp } : {}) });
  return { body, headers: { 'content-type': 'application/json', 'stripe-signature': header } };
}

export function bankDelivery(secret: string, event: object, t?: number) {
  const body = JSON.stringify(event);
  return { body, headers: { 'content-type': 'application/json', 'x-bank-signature': signBankPayload(secret, body, t) } };
}

export function bankEvent(over: { type?: string; paymentId?: string; amount?: string; counterparty?: Record<string, unknown> } = {}) {
  const s = suffix();
  return {
    id: `bevt_${s}`,
    type: over.type ?? 'payment_completed',
    createdAt: new Date().toISOString(),
    data: {
      payment_id: over.paymentId ?? `pay_${s}`,
      amount: over.amount ?? '99.90',
      currency: 'EUR',
      executedAt: new Date().toISOString().slice(0, 10),
      counterparty: over.counterparty ?? { name: 'Büro Huber KG', iban: 'AT48 3200 0000 1234 5864', email: 'office@huber.example' },
      reference: `RE-${s}`,
    },
  };
}

/**
 * A bank payment stored as ingest stores it (verified, normalized, pending), with no job queued:
 * for tests that drive the job, the sweep or the batches themselves. `minutesAgo` backdates its
 * receipt; `currency` replaces EUR (e.g. KWD, which the pipeline cannot book).
 */
export async function storePendingBankEvent(tenantId: string, over: Parameters<typeof bankEvent>[0] & { currency?: string; minutesAgo?: number } = {}) {
  const raw = bankEvent({ amount: '42.00', counterparty: { name: `Lieferant ${suffix()}` }, ...over });
  if (over.currency) raw.data.currency = over.currency;
  const event = mapBankEvent(raw as never);
  const [row] = await db()('webhookEvents')
    .insert({
      tenantId,
      provider: 'bank',
      event: event.eventType,
      status: 'pending',
      externalId: event.eventId,
      moneyExternalId: event.externalId,
      normalized: JSON.stringify(event),
      receivedAt: new Date(Date.now() - (over.minutesAgo ?? 0) * 60_000),
    })
    .returning('id');
  const eventRowId = row.id as string;
  return { eventRowId, tenantId, jobId: `webhook-${eventRowId}`, moneyExternalId: event.externalId!, event };
}

/**
 * For test files that start workers themselves: the workers a test started (set `.workers`) are
 * closed after it, the ledger must balance after every test, and the webhooks queue is emptied
 * after the file.
 */
export function workersPerTest(): { workers: RunningWorkers | null } {
  const state = { workers: null as RunningWorkers | null };
  afterEach(async () => {
    await state.workers?.close();
    state.workers = null;
    await expectLedgerBalanced();
  });
  afterAll(async () => {
    await getQueue(QUEUES.webhooks).obliterate({ force: true });
  });
  return state;
}

/** A PayPal delivery signed with the test certificate, transmitted now or at `at` (PayPal allows ±300 s). */
export function paypalDelivery(cert: PaypalTestCert, webhookId: string, certUrl: string, event: object, at = new Date()) {
  const body = JSON.stringify(event);
  const rawBody = Buffer.from(body);
  return { body, headers: signPaypalDelivery(cert, { rawBody, webhookId, certUrl, transmissionId: `tx-${suffix()}`, transmissionTime: at.toISOString() }) };
}

/** A Mollie webhook body, with X-Mollie-Signature when the installation has a signing secret. */
export function mollieDelivery(paymentId: string, signingSecret?: string) {
  const body = `id=${paymentId}`;
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (signingSecret) headers['x-mollie-signature'] = `sha256=${createHmac('sha256', signingSecret).update(body).digest('hex')}`;
  return { body, headers };
}

export { stripeInvoicePaymentPaidEvent } from '../providers/payments/support';

/** Poll until the log row of this delivery is no longer pending (the job ran). */
export async function waitForLogRows(tenantId: string, provider: string, count: number, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await db()('webhookEvents').where({ tenantId, provider }).orderBy('receivedAt');
    const done = rows.filter((r) => r.status !== 'pending');
    if (rows.length >= count && done.length === rows.length) return rows;
    if (Date.now() > deadline)
      throw new Error(`timed out: ${done.length}/${rows.length} of ${count} webhook rows finished: ${JSON.stringify(rows.map((r) => [r.status, r.error]))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Double entry holds for every tenant: the sum of debits equals the sum of credits. */
export async function expectLedgerBalanced(): Promise<void> {
  const unbalanced = await db()('journalLines')
    .select('tenantId')
    .sum({ d: 'debit' })
    .sum({ c: 'credit' })
    .groupBy('tenantId')
    .havingRaw('sum(debit) <> sum(credit)');
  expect(unbalanced).toEqual([]);
}

/** Rows a tenant owns in every table the pipeline writes to (for "nothing persists"). */
export async function tenantRowCounts(tenantId: string): Promise<Record<string, number>> {
  const tables = [
    'invoices',
    'invoiceItems',
    'payments',
    'suppliers',
    'journalEntries',
    'journalLines',
    'webhookEvents',
    'auditLog',
    'ledgerAccounts',
    'connectorInstallations',
    'providerPaymentRefs',
  ];
  const out: Record<string, number> = {};
  for (const t of tables) {
    const [{ n }] = await db()(t).where({ tenantId }).count<{ n: number }[]>({ n: '*' });
    out[t] = Number(n);
  }
  const [{ n }] = await db()('outbox').where({ prefix: process.env.REDIS_PREFIX }).count<{ n: number }[]>({ n: '*' });
  out.outbox = Number(n);
  return out;
}

/**
 * The environment of a webhook test file: a real API server, in-process webhook and maintenance
 * workers, and after every test the check that the ledger balances. `before` runs first (e.g.
 * fake providers whose URLs go into the configuration), `after` last.
 */
export function withWebhookServer(opts: { before?: () => Promise<void>; after?: () => Promise<void> } = {}) {
  const env = {} as { server: Awaited<ReturnType<typeof startTestServer>>; workers: RunningWorkers };
  beforeAll(async () => {
    await opts.before?.();
    env.server = await startTestServer();
    env.workers = await startWorkers({ queues: ['webhooks', 'maintenance'], schedule: false });
  });
  afterAll(async () => {
    await env.workers?.close();
    await env.server?.close();
    await opts.after?.();
  });
  afterEach(async () => {
    await expectLedgerBalanced();
  });
  return env;
}
