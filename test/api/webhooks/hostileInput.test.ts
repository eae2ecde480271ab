import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTeam } from '../../helpers/factories';
import { bankDelivery, bankEvent, deliver, install, stripeDelivery, stripePaymentEvent, waitForLogRows, withWebhookServer } from '../../helpers/webhookFactory';
import { db } from '../../../shared/db';
import { logger } from '../../../shared/logger';

/**
 * Issue 32, "Hostile input", through the real API and the real webhook worker: a correctly signed
 * delivery whose JSON holds a lone surrogate escape (`"\ud800"`, valid JSON that json/jsonb refuse)
 * is answered 200 and stored — the bytes exactly as received in raw_body, the normalized event
 * with U+FFFD — and booked; its redelivery is a duplicate. Signed events the pipeline cannot book
 * (amount 0.00, an impossible date) end failed with the reason, logged at warn, never error.
 * docs/webhooks.md and docs/resilience.md ("Hostile input") point here.
 */
const env = withWebhookServer();

const STRIPE_SECRET = 'whsec_test_hostile_0123456789abcdef';
const BANK_SECRET = 'bank_secret_hostile_0123456789';

/** The lines pino writes (as test/shared/logContext.test.ts captures them), at info and above. */
type Line = Record<string, unknown> & { msg: string; level: number };
const lines: Line[] = [];
const stream = (logger as unknown as Record<symbol, { write: (s: string) => boolean }>)[pino.symbols.streamSym];
const levelBefore = logger.level;
beforeAll(() => {
  logger.level = 'info';
  vi.spyOn(stream, 'write').mockImplementation((chunk: string) => {
    for (const raw of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(raw));
    return true;
  });
});
afterAll(() => {
  vi.restoreAllMocks();
  logger.level = levelBefore;
});
const WARN = 40;
const ERROR = 50;

async function rowsOf(tenantId: string, provider: string) {
  return db()('webhookEvents').where({ tenantId, provider }).orderBy('receivedAt').select('id', 'status', 'error', 'normalized', 'rawBody', 'invoiceId');
}

describe('a verified delivery whose JSON holds a lone surrogate', () => {
  it('stripe: 200, stored with the bytes as received and U+FFFD in the event, booked; the redelivery is a duplicate', async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'stripe', { webhookSecret: STRIPE_SECRET });
    const event = stripePaymentEvent({ amount: 1250 });
    event.data.object.customer_name = 'Acme \ud800 Ltd';
    const { body, headers } = stripeDelivery(STRIPE_SECRET, event);
    // JSON.stringify writes the lone surrogate as the escape, as a provider's JSON would carry it.
    expect(body).toContain('"customer_name":"Acme \\ud800 Ltd"');
    const sent = Buffer.from(body);

    const res = await deliver(env.server.url, path, body, headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ received: true, status: 'pending' });
    const [row] = await waitForLogRows(tenant.id, 'stripe', 1);
    expect(row).toMatchObject({ status: 'processed', error: null });
    const [stored] = await rowsOf(tenant.id, 'stripe');
    expect(Buffer.compare(stored.rawBody, sent)).toBe(0);
    expect(stored.normalized.counterparty.name).toBe('Acme \ufffd Ltd');
    const invoices = await db()('invoices').where({ tenantId: tenant.id, source: 'stripe' });
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ id: stored.invoiceId, totalGross: '12.50' });
    const supplier = await db()('suppliers').where({ id: invoices[0].supplierId }).first('name');
    expect(supplier.name).toBe('Acme \ufffd Ltd');

    // Stripe redelivers the same bytes (a new signature): a duplicate, nothing booked twice.
    const again = stripeDelivery(STRIPE_SECRET, event);
    expect(again.body).toBe(body);
    const res2 = await deliver(env.server.url, path, again.body, again.headers);
    expect(res2.status, JSON.stringify(res2.body)).toBe(200);
    expect(res2.body).toEqual({ received: true, status: 'duplicate' });
    const rows = await waitForLogRows(tenant.id, 'stripe', 2);
    expect(rows.map((r) => r.status)).toEqual(['processed', 'duplicate']);
    expect(await db()('invoices').where({ tenantId: tenant.id, source: 'stripe' })).toHaveLength(1);
  });

  it('bank: lone surrogates in a value and a key, a NUL and a clean event side by side: all 200, the odd ones keep their bytes, each booked once', async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'bank', { webhookSecret: BANK_SECRET });
    const hostile = bankEvent({ amount: '77.10', counterparty: { name: 'Lieferant \udc00 \ud83d GmbH', iban: 'AT48 3200 0000 1234 5864' } });
    (hostile.data as Record<string, unknown>)['note\ud800'] = 'a key the bank invented';
    hostile.data.reference = `RE-\u0000-${hostile.data.payment_id}`;
    const clean = bankEvent({ amount: '12.00', counterparty: { name: 'Ordentlich GmbH' } });
    const deliveries = [bankDelivery(BANK_SECRET, hostile), bankDelivery(BANK_SECRET, clean)];
    expect(deliveries[0].body).toContain('\\udc00 \\ud83d GmbH');

    const answers = await Promise.all(deliveries.map((d) => deliver(env.server.url, path, d.body, d.headers)));
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const rows = await waitForLogRows(tenant.id, 'bank', 2);
    expect(rows.map((r) => r.status)).toEqual(['processed', 'processed']);
    const stored = await rowsOf(tenant.id, 'bank');
    const odd = stored.find((r) => r.normalized.externalId === hostile.data.payment_id)!;
    const ok = stored.find((r) => r.normalized.externalId === clean.data.payment_id)!;
    expect(Buffer.compare(odd.rawBody, Buffer.from(deliveries[0].body))).toBe(0);
    expect(odd.normalized.counterparty.name).toBe('Lieferant \ufffd \ufffd GmbH');
    expect(odd.normalized.reference).toBe(`RE--${hostile.data.payment_id}`);
    // What needed no change keeps no copy of its bytes.
    expect(ok.rawBody).toBeNull();
    const invoices = await db()('invoices').where({ tenantId: tenant.id, source: 'bank' }).orderBy('totalGross').select('totalGross');
    expect(invoices.map((i) => i.totalGross)).toEqual(['12.00', '77.10']);

    const again = await deliver(env.server.url, path, deliveries[0].body, bankDelivery(BANK_SECRET, hostile).headers);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ received: true, status: 'duplicate' });
    expect(await db()('invoices').where({ tenantId: tenant.id, source: 'bank' })).toHaveLength(2);
  });
});

describe('signed events the pipeline cannot book', () => {
  it('amount 0.00 and an impossible date end failed with the reason, logged at warn, never error', async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'bank', { webhookSecret: BANK_SECRET });
    const zero = bankEvent({ amount: '0.00' });
    // No execution date, and a creation time in month 13: the event has no valid date.
    const undated = bankEvent({ amount: '10.00' });
    undated.createdAt = '2026-13-45T10:00:00Z';
    // Left out of the JSON.
    (undated.data as { executedAt?: string }).executedAt = undefined;
    // A day that does not exist in the execution date: refused by the adapter already (at ingest).
    const feb30 = bankEvent({ amount: '10.00' });
    feb30.data.executedAt = '2026-02-30';
    const firstLine = lines.length;
    for (const e of [zero, undated, feb30]) {
      const d = bankDelivery(BANK_SECRET, e);
      const res = await deliver(env.server.url, path, d.body, d.headers);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const rows = await waitForLogRows(tenant.id, 'bank', 3);
    const byEvent = (id: string) => rows.find((r) => r.externalId === id)!;
    expect(byEvent(zero.id)).toMatchObject({ status: 'failed', error: 'amount 0.00 must be positive' });
    expect(byEvent(undated.id)).toMatchObject({ status: 'failed', error: 'payment_completed has no valid date' });
    expect(byEvent(feb30.id)).toMatchObject({ status: 'failed' });
    expect(byEvent(feb30.id).error).toMatch(/executedAt "2026-02-30"/);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(0);

    const jobIds = [zero.id, undated.id].map((id) => `webhook-${byEvent(id).id}`);
    const ours = () => lines.slice(firstLine).filter((l) => jobIds.includes(String(l.jobId)));
    // The worker's lines for the two jobs: the refusal at warn with its reason, the job completed.
    const refused = ours().filter((l) => l.msg === 'webhook event refused: its data cannot be booked');
    expect(refused.map((l) => ({ level: l.level, reason: l.reason }))).toEqual(
      expect.arrayContaining([
        { level: WARN, reason: 'amount 0.00 must be positive' },
        { level: WARN, reason: 'payment_completed has no valid date' },
      ]),
    );
    expect(refused).toHaveLength(2);
    expect(ours().filter((l) => l.level >= ERROR)).toEqual([]);
    expect(lines.slice(firstLine).filter((l) => l.level >= ERROR)).toEqual([]);
  });
});
