import Decimal from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { startFakeMollie, type FakeMollie } from '../../helpers/fakeMollie';
import { createPaypalTestCert, startCertServer, type CertServer, type PaypalTestCert } from '../../helpers/paypalCerts';
import {
  bankDelivery,
  bankEvent,
  deliver,
  install,
  mollieDelivery,
  molliePaymentBody,
  mollieRefundBody,
  paypalCaptureEvent,
  paypalDelivery,
  paypalRefundEvent,
  stripeCurrentRefundEvent,
  stripeDelivery,
  stripeFailedEvent,
  stripeInvoicePaymentPaidEvent,
  stripePaymentEvent,
  stripeRefundEvent,
  suffix,
  waitForLogRows,
  withWebhookServer,
} from '../../helpers/webhookFactory';
import { reloadConfig } from '../../../shared/config';
import { db } from '../../../shared/db';
import { bookEvent } from '../../../workers/jobs/webhooks/eventBatches';
import { RetryLaterError } from '../../../shared/commands/webhooks/errors';

let mollie: FakeMollie;
let cert: PaypalTestCert;
let certServer: CertServer;

const env = withWebhookServer({
  before: async () => {
    mollie = await startFakeMollie();
    cert = createPaypalTestCert();
    certServer = await startCertServer(cert.certPem);
    process.env.MOLLIE_API_BASE_URL = mollie.baseUrl;
    process.env.PAYPAL_CERT_ORIGINS = certServer.origin;
    reloadConfig();
  },
  after: async () => {
    await mollie?.close();
    await certServer?.close();
  },
});

const STRIPE_SECRET = 'whsec_test_inbound_0123456789abcdef';
const BANK_SECRET = 'bank_secret_inbound_0123456789';

async function setAutoPost(token: string, slug: string, settings: Record<string, unknown> = {}) {
  const res = await client(env.server.url, { token }).put(`/api/connectors/${slug}/settings`, { autoPost: true, ...settings });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

async function entriesOf(tenantId: string) {
  return db()('journalEntries as je')
    .join('journalLines as jl', 'jl.entryId', 'je.id')
    .join('ledgerAccounts as a', 'a.id', 'jl.accountId')
    .where('je.tenantId', tenantId)
    .orderBy('je.createdAt')
    .select('je.id', 'je.sourceId', 'je.reversesEntryId', 'a.number', 'jl.debit', 'jl.credit');
}

describe('stripe', () => {
  it('a valid delivery becomes a paid incoming invoice with an auto-created supplier and a balanced entry', async () => {
    const { tenant, admin, manager } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'stripe', { webhookSecret: STRIPE_SECRET });
    await setAutoPost(admin.token, 'stripe');
    const event = stripePaymentEvent({ amount: 1000 });
    const { body, headers } = stripeDelivery(STRIPE_SECRET, event);
    const res = await deliver(env.server.url, path, body, headers);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true, status: 'pending' });

    const [row] = await waitForLogRows(tenant.id, 'stripe', 1);
    expect(row).toMatchObject({ status: 'processed', event: 'invoice.payment_succeeded', externalId: event.id, moneyExternalId: event.data.object.id });
    expect(row.processedAt).not.toBeNull();
    // Its job went through the outbox, and the worker's relay marked the row as sent (so the
    // periodic relay does not add it again).
    const outbox = await db()('outbox').where({ jobId: `webhook-${row.id}` });
    expect(outbox).toHaveLength(1);
    expect(outbox[0].enqueuedAt).not.toBeNull();

    const invoice = await db()('invoices').where({ tenantId: tenant.id, source: 'stripe' }).first();
    expect(invoice).toMatchObject({
      type: 'eingangsrechnung',
      status: 'bezahlt',
      invoiceNumber: event.data.object.id,
      externalId: event.data.object.id,
      totalGross: '10.00',
      totalTax: '0.00',
      amountPaid: '10.00',
      currency: 'EUR',
    });
    expect(row.invoiceId).toBe(invoice.id);
    expect(invoice.invoiceDate).toBe(invoice.issueDate);
    const items = await db()('invoiceItems').where({ invoiceId: invoice.id });
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ taxRate: '0.00', grossAmount: '10.00' });
    const payments = await db()('payments').where({ invoiceId: invoice.id });
    expect(payments).toHaveLength(1);
    expect(payments[0]).toMatchObject({ amount: '10.00', method: 'stripe' });
    const supplier = await db()('suppliers').where({ id: invoice.supplierId }).first();
    expect(supplier.merchantIds).toEqual({ stripe: event.data.object.customer });

    const lines = await entriesOf(tenant.id);
    expect(lines.map((l) => [l.number, l.debit, l.credit])).toEqual(
      expect.arrayContaining([
        ['7890', '10.00', '0.00'],
        ['2891', '0.00', '10.00'],
      ]),
    );
    expect(lines).toHaveLength(2);

    // The log API shows the spec's fields.
    const logs = await client(env.server.url, { token: manager.token }).get('/api/connectors/stripe/webhook-logs');
    expect(logs.status).toBe(200);
    expect(logs.body).toEqual([
      {
        id: row.id,
        provider: 'stripe',
        event: 'invoice.payment_succeeded',
        status: 'processed',
        externalId: event.id,
        receivedAt: expect.any(String),
        processedAt: expect.any(String),
      },
    ]);

    // The invoice reads through the invoices API like any other incoming invoice.
    const view = await client(env.server.url, { token: admin.token }).get(`/api/invoices/${invoice.id}`);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({ type: 'eingangsrechnung', status: 'bezahlt' });
  });

  it('a verified event with U+0000 in a text is stored without it and processed (no 503 loop of redeliveries)', async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'stripe', { webhookSecret: STRIPE_SECRET });
    const event = stripePaymentEvent({ amount: 1000 });
    event.data.object.customer_name = 'Nul\u0000 Byte GmbH';
    const { body, headers } = stripeDelivery(STRIPE_SECRET, event);
    const res = await deliver(env.server.url, path, body, headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [row] = await waitForLogRows(tenant.id, 'stripe', 1);
    expect(row.status).toBe('processed');
    const invoice = await db()('invoices').where({ tenantId: tenant.id, source: 'stripe' }).first();
    const supplier = await db()('suppliers').where({ id: invoice.supplierId }).first();
    expect(supplier.name).toBe('Nul Byte GmbH');
  });

  it('a failure event creates nothing and is logged processed; its redelivery is a duplicate', async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'stripe', { webhookSecret: STRIPE_SECRET });
    const d = stripeDelivery(STRIPE_SECRET, stripeFailedEvent());
    expect((await deliver(env.server.url, path, d.body, d.headers)).status).toBe(200);
    await waitForLogRows(tenant.id, 'stripe', 1);
    const again = await deliver(env.server.url, path, d.body, d.headers);
    expect(again.status).toBe(200);
    const rows = await waitForLogRows(tenant.id, 'stripe', 2);
    expect(rows.map((r) => r.status)).toEqual(['processed', 'duplicate']);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(0);
    expect(await db()('suppliers').where({ tenantId: tenant.id })).toHaveLength(0);
  });

  it('a redelivery (same event, or another event of the same payment) answers 200, creates nothing and logs duplicate', async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'stripe', { webhookSecret: STRIPE_SECRET });
    await setAutoPost(admin.token, 'stripe');
    const event = stripePaymentEvent();
    const d = stripeDelivery(STRIPE_SECRET, event);
    await deliver(env.server.url, path, d.body, d.headers);
    await waitForLogRows(tenant.id, 'stripe', 1);
    const again = await deliver(env.server.url, path, d.body, d.headers);
    expect(again.body).toEqual({ received: true, status: 'duplicate' });
    const resent = stripeDelivery(STRIPE_SECRET, { ...event, id: `evt_resend_${suffix()}` });
    expect((await deliver(env.server.url, path, resent.body, resent.headers)).status).toBe(200);
    const rows = await waitForLogRows(tenant.id, 'stripe', 3);
    expect(rows.map((r) => r.status)).toEqual(['processed', 'duplicate', 'duplicate']);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(1);
    expect(await db()('journalEntries').where({ tenantId: tenant.id })).toHaveLength(1);
    expect(await db()('suppliers').where({ tenantId: tenant.id })).toHaveLength(1);
  });

  it('a refund is a negative incoming invoice linked to the original and posts the reversing entry', async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'stripe', { webhookSecret: STRIPE_SECRET });
    await setAutoPost(admin.token, 'stripe');
    const pay = stripePaymentEvent({ amount: 1000 });
    const p = stripeDelivery(STRIPE_SECRET, pay);
    await deliver(env.server.url, path, p.body, p.headers);
    await waitForLogRows(tenant.id, 'stripe', 1);
    const refund = stripeRefundEvent({ invoiceId: pay.data.object.id, amount: 300 });
    const r = stripeDelivery(STRIPE_SECRET, refund);
    expect((await deliver(env.server.url, path, r.body, r.headers)).status).toBe(200);
    const rows = await waitForLogRows(tenant.id, 'stripe', 2);
    expect(rows.map((x) => x.status)).toEqual(['processed', 'processed']);

    const original = await db()('invoices').where({ tenantId: tenant.id, externalId: pay.data.object.id }).first();
    const negative = await db()('invoices').where({ tenantId: tenant.id, externalId: refund.data.object.refunds.data[0].id }).first();
    expect(negative).toMatchObject({
      type: 'eingangsrechnung',
      totalGross: '-3.00',
      relatedInvoiceId: original.id,
      supplierId: original.supplierId,
      source: 'stripe',
    });
    expect(await db()('payments').where({ invoiceId: negative.id })).toHaveLength(0);

    const entries = await db()('journalEntries').where({ tenantId: tenant.id }).orderBy('createdAt');
    expect(entries).toHaveLength(2);
    const [first, reversal] = [entries.find((e) => e.sourceId === original.id), entries.find((e) => e.sourceId === negative.id)];
    expect(reversal.reversesEntryId).toBe(first.id);
    const lines = await entriesOf(tenant.id);
    const revLines = lines.filter((l) => l.id === reversal.id).map((l) => [l.number, l.debit, l.credit]);
    expect(revLines).toEqual(
      expect.arrayContaining([
        ['2891', '3.00', '0.00'],
        ['7890', '0.00', '3.00'],
      ]),
    );
  });

  it('a foreign-currency payment is booked but not auto-posted (no exchange rate in the event)', async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'stripe', { webhookSecret: STRIPE_SECRET });
    await setAutoPost(admin.token, 'stripe');
    const d = stripeDelivery(STRIPE_SECRET, stripePaymentEvent({ currency: 'usd' }));
    await deliver(env.server.url, path, d.body, d.headers);
    const [row] = await waitForLogRows(tenant.id, 'stripe', 1);
    expect(row.status).toBe('processed');
    expect(await db()('invoices').where({ tenantId: tenant.id, currency: 'USD' })).toHaveLength(1);
    expect(await db()('journalEntries').where({ tenantId: tenant.id })).toHaveLength(0);
  });

  it('a foreign-currency payment stores the ECB rate of its day when the feed has one, and auto-posts in EUR at it', async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'stripe', { webhookSecret: STRIPE_SECRET });
    await setAutoPost(admin.token, 'stripe');
    // The test events are of 2009-02-13/14 (STRIPE_TEST_CREATED): no other test file stores rates of 2009.
    await db()('exchangeRates')
      .insert([
        { currency: 'GBP', rateDate: '2009-02-12', rate: '0.8900', source: 'ecb' },
        { currency: 'GBP', rateDate: '2009-02-13', rate: '0.8910', source: 'ecb' },
      ])
      .onConflict(['currency', 'rateDate'])
      .ignore();
    const d = stripeDelivery(STRIPE_SECRET, stripePaymentEvent({ currency: 'gbp', eventId: 'evt_gbp_rate' }));
    await deliver(env.server.url, path, d.body, d.headers);
    const [row] = await waitForLogRows(tenant.id, 'stripe', 1);
    expect(row.status).toBe('processed');
    const [invoice] = await db()('invoices').where({ tenantId: tenant.id, currency: 'GBP' });
    expect(invoice).toMatchObject({ exchangeRate: '0.891000', exchangeRateDate: '2009-02-13', exchangeRateSource: 'ecb' });
    const eur = new Decimal(invoice.totalGross).div('0.891').toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toFixed(2);
    const lines = await entriesOf(tenant.id);
    expect(
      lines
        .filter((l) => l.sourceId === invoice.id)
        .map((l) => [l.debit, l.credit])
        .sort(),
    ).toEqual(
      [
        ['0.00', eur],
        [eur, '0.00'],
      ].sort(),
    );
  });

  it('current API: charge.refunded without charge.invoice links through the PaymentIntent that invoice_payment.paid named', async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'stripe', { webhookSecret: STRIPE_SECRET });
    await setAutoPost(admin.token, 'stripe');
    const pay = stripePaymentEvent({ amount: 1000 });
    const invoiceId = pay.data.object.id;
    const pi = `pi_test_${suffix()}`;
    const chargeId = `ch_test_${suffix()}`;
    for (const e of [pay, stripeInvoicePaymentPaidEvent({ invoiceId, paymentIntent: pi, currency: 'eur' })]) {
      const d = stripeDelivery(STRIPE_SECRET, e);
      expect((await deliver(env.server.url, path, d.body, d.headers)).status).toBe(200);
    }
    const linked = await waitForLogRows(tenant.id, 'stripe', 2);
    expect(linked.map((r) => [r.event, r.status])).toEqual([
      ['invoice.payment_succeeded', 'processed'],
      ['invoice_payment.paid', 'processed'],
    ]);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(1); // the link event books nothing

    // Two partial refunds as Stripe sends them today: with the refund list and without it.
    const first = stripeCurrentRefundEvent({ paymentIntent: pi, chargeId, amount: 300 });
    const second = stripeCurrentRefundEvent({ paymentIntent: pi, chargeId, amount: 200, refundedBefore: 300, withoutRefundList: true });
    for (const e of [first, second]) {
      const d = stripeDelivery(STRIPE_SECRET, e);
      expect((await deliver(env.server.url, path, d.body, d.headers)).status).toBe(200);
      await waitForLogRows(tenant.id, 'stripe', e === first ? 3 : 4);
    }
    const rows = await db()('webhookEvents').where({ tenantId: tenant.id }).orderBy('receivedAt');
    expect(rows.map((r) => r.status)).toEqual(['processed', 'processed', 'processed', 'processed']);

    const original = await db()('invoices').where({ tenantId: tenant.id, externalId: invoiceId }).first();
    const refunds = await db()('invoices').where({ tenantId: tenant.id, relatedInvoiceId: original.id }).orderBy('totalGross');
    expect(refunds.map((r) => [r.externalId, r.totalGross, r.supplierId])).toEqual([
      [first.data.object.refunds.data[0].id, '-3.00', original.supplierId],
      [`${chargeId}:refunded:500`, '-2.00', original.supplierId],
    ]);
    expect(await db()('suppliers').where({ tenantId: tenant.id })).toHaveLength(1); // no supplier from the refund's billing name
    const entries = await db()('journalEntries').where({ tenantId: tenant.id });
    const paymentEntry = entries.find((e) => e.sourceId === original.id);
    expect(
      entries
        .filter((e) => e.reversesEntryId === paymentEntry.id)
        .map((e) => e.sourceId)
        .sort(),
    ).toEqual(refunds.map((r) => r.id).sort());
  });

  it('a refund named only by its PaymentIntent waits while the invoice_payment.paid that names it is still pending', async () => {
    const { tenant } = await createTeam();
    const pi = `pi_test_${suffix()}`;
    const pending = {
      provider: 'stripe',
      eventId: `evt_${suffix()}`,
      eventType: 'invoice_payment.paid',
      kind: 'ignored',
      externalId: null,
      amount: null,
      currency: null,
      date: null,
      counterparty: {},
      paymentRefs: { externalId: `in_${suffix()}`, refs: [pi] },
    };
    const refund = {
      provider: 'stripe',
      eventId: `evt_${suffix()}`,
      eventType: 'charge.refunded',
      kind: 'refund',
      externalId: `re_${suffix()}`,
      originalExternalId: null,
      originalRefs: [pi, `ch_${suffix()}`],
      amount: '1.00',
      currency: 'EUR',
      date: '2026-03-02',
      counterparty: {},
    };
    // Stored, as ingest stores them; no job runs here.
    await db()('webhookEvents').insert({
      tenantId: tenant.id,
      provider: 'stripe',
      event: pending.eventType,
      status: 'pending',
      externalId: pending.eventId,
      normalized: JSON.stringify(pending),
    });
    const [row] = await db()('webhookEvents')
      .insert({
        tenantId: tenant.id,
        provider: 'stripe',
        event: refund.eventType,
        status: 'pending',
        externalId: refund.eventId,
        moneyExternalId: refund.externalId,
        normalized: JSON.stringify(refund),
      })
      .returning('id');
    await expect(bookEvent({ eventRowId: row.id, tenantId: tenant.id })).rejects.toBeInstanceOf(RetryLaterError);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(0);
  });

  it('a PaymentIntent recorded for two invoices links a refund to neither (the wrong reversal is worse than none)', async () => {
    const { tenant } = await createTeam();
    const pi = `pi_test_${suffix()}`;
    await db()('providerPaymentRefs').insert([
      { tenantId: tenant.id, provider: 'stripe', ref: pi, externalId: `in_a_${suffix()}` },
      { tenantId: tenant.id, provider: 'stripe', ref: pi, externalId: `in_b_${suffix()}` },
    ]);
    const refund = {
      provider: 'stripe',
      eventId: `evt_${suffix()}`,
      eventType: 'charge.refunded',
      kind: 'refund',
      externalId: `re_${suffix()}`,
      originalExternalId: null,
      originalRefs: [pi],
      amount: '1.00',
      currency: 'EUR',
      date: '2026-03-02',
      counterparty: { name: 'Jenny Rosen' },
    };
    const [row] = await db()('webhookEvents')
      .insert({
        tenantId: tenant.id,
        provider: 'stripe',
        event: refund.eventType,
        status: 'pending',
        externalId: refund.eventId,
        moneyExternalId: refund.externalId,
        normalized: JSON.stringify(refund),
      })
      .returning('id');
    const out = await bookEvent({ eventRowId: row.id, tenantId: tenant.id });
    expect(out.status).toBe('processed');
    expect(out.result!.steps.find((st) => st.step === 'invoice')!.detail).toMatch(/ambiguous/);
    expect((await db()('invoices').where({ tenantId: tenant.id }).first()).relatedInvoiceId).toBeNull();
  });

  it('settings: default supplier wins; expense account from settings; else the supplier history decides', async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'stripe', { webhookSecret: STRIPE_SECRET });
    const [dflt] = await db()('suppliers').insert({ tenantId: tenant.id, name: 'Sammel-Lieferant' }).returning('*');
    await setAutoPost(admin.token, 'stripe', { defaultSupplierId: dflt.id, expenseAccount: '7600' });
    const a = stripeDelivery(STRIPE_SECRET, stripePaymentEvent());
    await deliver(env.server.url, path, a.body, a.headers);
    await waitForLogRows(tenant.id, 'stripe', 1);
    // Settings without the expense account: the supplier's history (7600) is detected.
    await setAutoPost(admin.token, 'stripe', { expenseAccount: null });
    const b = stripeDelivery(STRIPE_SECRET, stripePaymentEvent());
    await deliver(env.server.url, path, b.body, b.headers);
    await waitForLogRows(tenant.id, 'stripe', 2);
    const invoices = await db()('invoices').where({ tenantId: tenant.id });
    expect(invoices.map((i) => i.supplierId)).toEqual([dflt.id, dflt.id]);
    const debits = (await entriesOf(tenant.id)).filter((l) => Number(l.debit) > 0).map((l) => l.number);
    expect(debits).toEqual(['7600', '7600']);
    expect(await db()('suppliers').where({ tenantId: tenant.id })).toHaveLength(1);
  });

  it('a posting refused for a missing account leaves the invoice and says why on the log row; a posted one leaves no error', async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'stripe', { webhookSecret: STRIPE_SECRET });
    await setAutoPost(admin.token, 'stripe', {});
    const ok = stripeDelivery(STRIPE_SECRET, stripePaymentEvent());
    await deliver(env.server.url, path, ok.body, ok.headers);
    const [first] = await waitForLogRows(tenant.id, 'stripe', 1);
    expect(first).toMatchObject({ status: 'processed', error: null });
    expect(first.invoiceId).toBeTruthy();
    expect(first.processedAt).toBeTruthy();

    // The account the settings name was valid when saved and is gone from the chart since.
    await db()('connectorInstallations')
      .where({ tenantId: tenant.id, provider: 'stripe' })
      .update({ settings: db().raw(`settings || '{"expenseAccount": "9998"}'::jsonb`) });
    const refused = stripeDelivery(STRIPE_SECRET, stripePaymentEvent());
    await deliver(env.server.url, path, refused.body, refused.headers);
    const rows = await waitForLogRows(tenant.id, 'stripe', 2);
    const second = rows.find((r) => r.id !== first.id)!;
    expect(second.status).toBe('processed');
    expect(second.error).toBe("auto-post failed: Expense account 9998 does not exist in the tenant's chart of accounts");
    expect(await db()('invoices').where({ tenantId: tenant.id, id: second.invoiceId })).toHaveLength(1);
    expect(await db()('journalEntries').where({ tenantId: tenant.id })).toHaveLength(1);
  });

  it("the supplier's default expense account beats its history; one that is not in the chart is ignored", async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'stripe', { webhookSecret: STRIPE_SECRET });
    const [dflt] = await db()('suppliers').insert({ tenantId: tenant.id, name: 'Büro Shop', defaultExpenseAccount: '7600' }).returning('*');
    await setAutoPost(admin.token, 'stripe', { defaultSupplierId: dflt.id });
    const a = stripeDelivery(STRIPE_SECRET, stripePaymentEvent());
    await deliver(env.server.url, path, a.body, a.headers);
    await waitForLogRows(tenant.id, 'stripe', 1);
    // A default that is not in the chart is skipped: the history (7600) decides.
    await db()('suppliers').where({ id: dflt.id }).update({ defaultExpenseAccount: '9999' });
    const b = stripeDelivery(STRIPE_SECRET, stripePaymentEvent());
    await deliver(env.server.url, path, b.body, b.headers);
    await waitForLogRows(tenant.id, 'stripe', 2);
    // With neither, the chart's default (EKR 7890).
    const [other] = await db()('suppliers').insert({ tenantId: tenant.id, name: 'Neu GmbH' }).returning('*');
    await setAutoPost(admin.token, 'stripe', { defaultSupplierId: other.id });
    const c = stripeDelivery(STRIPE_SECRET, stripePaymentEvent());
    await deliver(env.server.url, path, c.body, c.headers);
    const rows = await waitForLogRows(tenant.id, 'stripe', 3);
    expect(rows.map((r) => r.status)).toEqual(['processed', 'processed', 'processed']);
    const debits = (await entriesOf(tenant.id)).filter((l) => Number(l.debit) > 0).map((l) => l.number);
    expect(debits).toEqual(['7600', '7600', '7890']);
  });
});

describe('bank', () => {
  it('payment_completed matches an existing supplier by e-mail (case-insensitive); payment_failed creates nothing', async () => {
    const { tenant, admin } = await createTeam({ country: 'DE' });
    const { path } = await install(env.server.url, admin.token, 'bank', { webhookSecret: BANK_SECRET });
    await setAutoPost(admin.token, 'bank');
    const [huber] = await db()('suppliers').insert({ tenantId: tenant.id, name: 'Huber', email: 'Office@Huber.example' }).returning('*');
    const ok = bankDelivery(BANK_SECRET, bankEvent({ amount: '99.90' }));
    expect((await deliver(env.server.url, path, ok.body, ok.headers)).status).toBe(200);
    const failed = bankDelivery(BANK_SECRET, bankEvent({ type: 'payment_failed' }));
    expect((await deliver(env.server.url, path, failed.body, failed.headers)).status).toBe(200);
    const rows = await waitForLogRows(tenant.id, 'bank', 2);
    expect(rows.map((r) => r.status)).toEqual(['processed', 'processed']);
    const invoices = await db()('invoices').where({ tenantId: tenant.id });
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ supplierId: huber.id, totalGross: '99.90', source: 'bank' });
    // DE: SKR03, debit 4900, credit the bank 1200 directly.
    const lines = (await entriesOf(tenant.id)).map((l) => [l.number, l.debit, l.credit]);
    expect(lines).toEqual(
      expect.arrayContaining([
        ['4900', '99.90', '0.00'],
        ['1200', '0.00', '99.90'],
      ]),
    );
  });

  it('an event the pipeline cannot book (a KWD amount with 3 decimals) ends failed with the reason; nothing is created', async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'bank', { webhookSecret: BANK_SECRET });
    const ev = bankEvent({ amount: '1.234' });
    ev.data.currency = 'KWD';
    const d = bankDelivery(BANK_SECRET, ev);
    expect((await deliver(env.server.url, path, d.body, d.headers)).status).toBe(200);
    const [row] = await waitForLogRows(tenant.id, 'bank', 1);
    expect(row.status).toBe('failed');
    expect(row.error).toMatch(/KWD/);
    expect(row.processedAt).not.toBeNull();
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(0);
    expect(await db()('suppliers').where({ tenantId: tenant.id })).toHaveLength(0);
  });
});

describe('paypal', () => {
  it('PAYMENT.CAPTURE.COMPLETED with the certificate served locally; its refund links to the capture', async () => {
    const { tenant, admin } = await createTeam();
    const webhookId = `WH-${suffix()}`;
    const { path } = await install(env.server.url, admin.token, 'paypal', { webhookId });
    const completed = paypalCaptureEvent();
    const d = paypalDelivery(cert, webhookId, certServer.certUrl, completed);
    const res = await deliver(env.server.url, path, d.body, d.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const refunded = paypalRefundEvent(completed.resource.id);
    const r = paypalDelivery(cert, webhookId, certServer.certUrl, refunded);
    expect((await deliver(env.server.url, path, r.body, r.headers)).status).toBe(200);
    const rows = await waitForLogRows(tenant.id, 'paypal', 2);
    expect(rows.map((x) => [x.status, x.event])).toEqual([
      ['processed', 'PAYMENT.CAPTURE.COMPLETED'],
      ['processed', 'PAYMENT.CAPTURE.REFUNDED'],
    ]);
    const capture = await db()('invoices').where({ tenantId: tenant.id, externalId: completed.resource.id }).first();
    expect(capture).toMatchObject({ source: 'paypal', currency: completed.resource.amount.currency_code, totalGross: completed.resource.amount.value });
    const refund = await db()('invoices').where({ tenantId: tenant.id, externalId: refunded.resource.id }).first();
    expect(refund).toMatchObject({ relatedInvoiceId: capture.id, totalGross: `-${refunded.resource.amount.value}` });
  });

  it('a delivery transmitted more than 300 s ago (or ahead) is 400 invalid_signature, though correctly signed', async () => {
    const { tenant, admin } = await createTeam();
    const webhookId = `WH-${suffix()}`;
    const { path } = await install(env.server.url, admin.token, 'paypal', { webhookId });
    for (const offsetSec of [-3600, -301, 3600]) {
      const d = paypalDelivery(cert, webhookId, certServer.certUrl, paypalCaptureEvent(), new Date(Date.now() + offsetSec * 1000));
      expect((await deliver(env.server.url, path, d.body, d.headers)).status).toBe(400);
    }
    const rows = await db()('webhookEvents').where({ tenantId: tenant.id });
    expect(rows.map((r) => r.status)).toEqual(['invalid_signature', 'invalid_signature', 'invalid_signature']);
    expect(rows.every((r) => /timestamp_out_of_tolerance/.test(r.error))).toBe(true);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(0);
  });
});

describe('mollie', () => {
  const paymentOf = (id: string, over: Record<string, unknown> = {}) => molliePaymentBody({ id, ...over });

  it('payment.paid is verified against the Mollie API and booked; an unknown payment is 400; an API outage is 503', async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'mollie', { apiKey: mollie.apiKey });
    const id = `tr_${suffix()}`;
    mollie.setPayment(paymentOf(id));
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect((await deliver(env.server.url, path, `id=${id}`, form)).status).toBe(200);
    const [row] = await waitForLogRows(tenant.id, 'mollie', 1);
    expect(row).toMatchObject({ status: 'processed', event: 'payment.paid', externalId: `${id}:paid` });
    expect(await db()('invoices').where({ tenantId: tenant.id, externalId: id, totalGross: '20.00' })).toHaveLength(1);

    expect((await deliver(env.server.url, path, `id=tr_unknown${suffix()}`, form)).status).toBe(400);
    mollie.failWith = 503;
    try {
      const down = await deliver(env.server.url, path, `id=${id}`, form);
      expect(down.status).toBe(503);
      expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      mollie.failWith = null;
    }
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(1);
  });

  it('a refund whose paid delivery was lost books the payment (related) first, then the linked refund', async () => {
    const { tenant, admin } = await createTeam();
    const { path } = await install(env.server.url, admin.token, 'mollie', { apiKey: mollie.apiKey });
    await setAutoPost(admin.token, 'mollie');
    const id = `tr_${suffix()}`;
    mollie.setPayment(paymentOf(id, { amountRefunded: { value: '5.00', currency: 'EUR' } }));
    const refund = mollieRefundBody(id, { id: `re_${suffix()}`, amount: { value: '5.00', currency: 'EUR' } });
    mollie.addRefund(id, refund);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect((await deliver(env.server.url, path, `id=${id}`, form)).status).toBe(200);
    const [row] = await waitForLogRows(tenant.id, 'mollie', 1);
    expect(row).toMatchObject({ status: 'processed', event: 'refund.created' });
    const pay = await db()('invoices').where({ tenantId: tenant.id, externalId: id }).first();
    const ref = await db()('invoices').where({ tenantId: tenant.id, externalId: refund.id }).first();
    expect(pay.totalGross).toBe('20.00');
    expect(ref).toMatchObject({ totalGross: '-5.00', relatedInvoiceId: pay.id });
    const entries = await db()('journalEntries').where({ tenantId: tenant.id });
    expect(entries).toHaveLength(2);
    expect(entries.find((e) => e.sourceId === ref.id).reversesEntryId).toBe(entries.find((e) => e.sourceId === pay.id).id);
    // Mollie calls again: everything is booked, so the delivery is a duplicate.
    expect((await deliver(env.server.url, path, `id=${id}`, form)).body).toEqual({ received: true, status: 'duplicate' });
  });
});

/**
 * The inbound checks for every provider, each with its own factory: a valid delivery, the same
 * delivery tampered, signed with another secret, replayed (stale timestamp; Mollie has none, so a
 * correctly signed id the API does not know), unsigned, and an authentic payload we cannot map.
 * Mollie is installed with a signing secret so that its signature checks apply.
 */
type Delivery = { body: string; headers: Record<string, string> };
interface ProviderCase {
  secrets: () => Record<string, string>;
  valid: (s: Record<string, string>) => Delivery;
  tampered: (s: Record<string, string>) => Delivery;
  wrongSecret: (s: Record<string, string>) => Delivery;
  /** stripe, bank, paypal: a correctly signed delivery from an hour ago; mollie: a signed id the API does not know. */
  replayed: (s: Record<string, string>) => Delivery;
  unsigned: (s: Record<string, string>) => Delivery;
  /** Authentic (verifies) but not mappable → 200, log row failed; event and externalId when known. */
  unusable: (s: Record<string, string>) => Delivery & { event: string | null; externalId: string | null };
}
const hourAgo = () => new Date(Date.now() - 3600_000);
const molliePayment = (over: Record<string, unknown> = {}) => {
  const id = `tr_${suffix()}`;
  mollie.setPayment(molliePaymentBody({ id, ...over }));
  return id;
};
const CASES: Record<'stripe' | 'paypal' | 'mollie' | 'bank', ProviderCase> = {
  stripe: {
    secrets: () => ({ webhookSecret: STRIPE_SECRET }),
    valid: () => stripeDelivery(STRIPE_SECRET, stripePaymentEvent()),
    tampered: () => {
      const d = stripeDelivery(STRIPE_SECRET, stripePaymentEvent());
      return { ...d, body: d.body.replace('"amount_paid":', '"amount_paid":9') };
    },
    wrongSecret: () => stripeDelivery('whsec_someone_else', stripePaymentEvent()),
    replayed: () => stripeDelivery(STRIPE_SECRET, stripePaymentEvent(), Math.floor(hourAgo().getTime() / 1000)),
    unsigned: () => ({ body: JSON.stringify(stripePaymentEvent()), headers: { 'content-type': 'application/json' } }),
    unusable: () => {
      const e = stripePaymentEvent();
      e.data.object.currency = 'euro';
      return { ...stripeDelivery(STRIPE_SECRET, e), event: 'invoice.payment_succeeded', externalId: e.id };
    },
  },
  paypal: {
    secrets: () => ({ webhookId: `WH-${suffix()}` }),
    valid: (s) => paypalDelivery(cert, s.webhookId, certServer.certUrl, paypalCaptureEvent()),
    tampered: (s) => {
      const d = paypalDelivery(cert, s.webhookId, certServer.certUrl, paypalCaptureEvent());
      return { ...d, body: d.body.replace('"value":"2.51"', '"value":"9.51"') };
    },
    wrongSecret: () => paypalDelivery(cert, 'WH-someone-else', certServer.certUrl, paypalCaptureEvent()),
    replayed: (s) => paypalDelivery(cert, s.webhookId, certServer.certUrl, paypalCaptureEvent(), hourAgo()),
    unsigned: () => ({ body: JSON.stringify(paypalCaptureEvent()), headers: { 'content-type': 'application/json' } }),
    unusable: (s) => {
      const e = paypalCaptureEvent();
      delete e.resource.id;
      return { ...paypalDelivery(cert, s.webhookId, certServer.certUrl, e), event: 'PAYMENT.CAPTURE.COMPLETED', externalId: e.id };
    },
  },
  mollie: {
    secrets: () => ({ apiKey: mollie.apiKey, signingSecret: `mollie-signing-${suffix()}` }),
    valid: (s) => mollieDelivery(molliePayment(), s.signingSecret),
    tampered: (s) => {
      const d = mollieDelivery(molliePayment(), s.signingSecret);
      return { ...d, body: `id=${molliePayment()}` };
    },
    wrongSecret: () => mollieDelivery(molliePayment(), 'someone-elses-signing-secret'),
    replayed: (s) => mollieDelivery(`tr_unknown${suffix()}`, s.signingSecret),
    unsigned: () => mollieDelivery(molliePayment()),
    unusable: (s) => {
      const id = molliePayment({ amount: { value: '20.00', currency: 'EURO' } });
      return { ...mollieDelivery(id, s.signingSecret), event: 'payment.paid', externalId: `${id}:paid` };
    },
  },
  bank: {
    secrets: () => ({ webhookSecret: BANK_SECRET }),
    valid: () => bankDelivery(BANK_SECRET, bankEvent()),
    tampered: () => {
      const d = bankDelivery(BANK_SECRET, bankEvent());
      return { ...d, body: d.body.replace('99.90', '9.90') };
    },
    wrongSecret: () => bankDelivery('other-secret', bankEvent()),
    replayed: () => bankDelivery(BANK_SECRET, bankEvent(), Math.floor(hourAgo().getTime() / 1000)),
    unsigned: () => ({ body: JSON.stringify(bankEvent()), headers: { 'content-type': 'application/json' } }),
    unusable: () => {
      const e = bankEvent({ amount: '12.345' }); // more places than EUR has: the adapter will not round
      return { ...bankDelivery(BANK_SECRET, e), event: 'payment_completed', externalId: e.id };
    },
  },
};
const SLUGS = Object.keys(CASES) as Array<keyof typeof CASES>;

describe.each(SLUGS)('every provider: %s', (slug) => {
  const c = CASES[slug];

  it('tampered body, wrong secret, replay and no signature are 400 with invalid_signature rows; nothing is created', async () => {
    const { tenant, admin } = await createTeam();
    const secrets = c.secrets();
    const { path } = await install(env.server.url, admin.token, slug, secrets);
    for (const d of [c.tampered(secrets), c.wrongSecret(secrets), c.replayed(secrets), c.unsigned(secrets)]) {
      const res = await deliver(env.server.url, path, d.body, d.headers);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
    }
    const rows = await db()('webhookEvents').where({ tenantId: tenant.id });
    expect(rows.map((r) => r.status)).toEqual(Array(4).fill('invalid_signature'));
    expect(rows.every((r) => r.processedAt)).toBe(true);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(0);
    // The valid delivery still goes through: the refusals were about the deliveries, not the installation.
    const ok = c.valid(secrets);
    expect((await deliver(env.server.url, path, ok.body, ok.headers)).status).toBe(200);
    await waitForLogRows(tenant.id, slug, 5);
  });

  it('unknown token → 404 whatever the signature; its token on another provider path → 404; no log row', async () => {
    const { tenant, admin } = await createTeam();
    const secrets = c.secrets();
    const { token } = await install(env.server.url, admin.token, slug, secrets);
    const d = c.valid(secrets);
    expect((await deliver(env.server.url, `/api/payment-import/${slug}/${'x'.repeat(43)}`, d.body, d.headers)).status).toBe(404);
    const other = SLUGS.find((x) => x !== slug)!;
    expect((await deliver(env.server.url, `/api/payment-import/${other}/${token}`, d.body, d.headers)).status).toBe(404);
    expect((await deliver(env.server.url, `/api/payment-import/nope/${token}`, d.body, d.headers)).status).toBe(404);
    // Over-long path segments are unknown too: 404 in the envelope, not a validation 400.
    for (const p of [`/api/payment-import/${slug}/${'a'.repeat(2000)}`, `/api/payment-import/${'p'.repeat(300)}/${token}`]) {
      const res = await deliver(env.server.url, p, d.body, d.headers);
      expect(res.status).toBe(404);
      expect((res.body as { error: unknown }).error).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    }
    expect(await db()('webhookEvents').where({ tenantId: tenant.id })).toHaveLength(0);
  });

  it('reinstall rotates the token: the old URL is 404, the new one accepts the delivery', async () => {
    const { tenant, admin } = await createTeam();
    const secrets = c.secrets();
    const first = await install(env.server.url, admin.token, slug, secrets);
    const second = await install(env.server.url, admin.token, slug, secrets);
    expect(second.token).not.toBe(first.token);
    const d = c.valid(secrets);
    expect((await deliver(env.server.url, first.path, d.body, d.headers)).status).toBe(404);
    expect(await db()('webhookEvents').where({ tenantId: tenant.id })).toHaveLength(0);
    expect((await deliver(env.server.url, second.path, d.body, d.headers)).status).toBe(200);
    const [row] = await waitForLogRows(tenant.id, slug, 1);
    expect(row.status).toBe('processed');
  });

  it('plain HTTP is 403 when HTTPS is required, before the token or the signature is looked at', async () => {
    const strict = await startTestServer({ REQUIRE_HTTPS_WEBHOOKS: 'true' });
    try {
      const { tenant, admin } = await createTeam();
      const secrets = c.secrets();
      const { path } = await install(env.server.url, admin.token, slug, secrets);
      const d = c.valid(secrets);
      const res = await deliver(strict.url, path, d.body, d.headers);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', status: 403 });
      expect((await deliver(strict.url, `/api/payment-import/${slug}/${'x'.repeat(43)}`, d.body, d.headers)).status).toBe(403);
      expect(await db()('webhookEvents').where({ tenantId: tenant.id })).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });

  it('an authentic payload we cannot map is answered 200 and logged failed with the reason (no redelivery for days); nothing is queued', async () => {
    const { tenant, admin } = await createTeam();
    const secrets = c.secrets();
    const { path } = await install(env.server.url, admin.token, slug, secrets);
    const d = c.unusable(secrets);
    const res = await deliver(env.server.url, path, d.body, d.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ received: true, status: 'failed' });
    const rows = await db()('webhookEvents').where({ tenantId: tenant.id });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'failed', event: d.event, externalId: d.externalId });
    expect(rows[0].error).toMatch(new RegExp(`^${slug}: `));
    expect(rows[0].processedAt).not.toBeNull();
    expect(await db()('outbox').where({ jobId: `webhook-${rows[0].id}` })).toHaveLength(0);
    expect(await db()('invoices').where({ tenantId: tenant.id })).toHaveLength(0);
    // The log API shows it like any other finished delivery.
    const logs = await client(env.server.url, { token: admin.token }).get(`/api/connectors/${slug}/webhook-logs`);
    expect(logs.body.map((l: { status: string }) => l.status)).toEqual(['failed']);
  });
});

describe('transport', () => {
  it('plain HTTP is 403 when HTTPS is required; X-Forwarded-Proto counts only with TRUST_PROXY', async () => {
    const strict = await startTestServer({ REQUIRE_HTTPS_WEBHOOKS: 'true' });
    const proxied = await startTestServer({ REQUIRE_HTTPS_WEBHOOKS: 'true', TRUST_PROXY: 'true' });
    try {
      const { admin } = await createTeam();
      const { path } = await install(env.server.url, admin.token, 'stripe', { webhookSecret: STRIPE_SECRET });
      const d = stripeDelivery(STRIPE_SECRET, stripePaymentEvent());
      const plain = await deliver(strict.url, path, d.body, d.headers);
      expect(plain.status).toBe(403);
      expect(plain.body.error).toMatchObject({ code: 'FORBIDDEN', status: 403 });
      // A client cannot claim HTTPS itself when no proxy is trusted.
      expect((await deliver(strict.url, path, d.body, { ...d.headers, 'x-forwarded-proto': 'https' })).status).toBe(403);
      // Behind a trusted proxy that terminated TLS, the delivery is accepted.
      expect((await deliver(proxied.url, path, d.body, { ...d.headers, 'x-forwarded-proto': 'https' })).status).toBe(200);
      expect((await deliver(proxied.url, path, d.body, { ...d.headers, 'x-forwarded-proto': 'http' })).status).toBe(403);
    } finally {
      await strict.close();
      await proxied.close();
    }
  });

  it('the webhook rate limit per IP answers 429 with Retry-After', async () => {
    const limited = await startTestServer({ RATE_LIMIT_WEBHOOKS_POINTS: '3', REDIS_PREFIX: `${process.env.REDIS_PREFIX}_rl${suffix()}` });
    try {
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 5; i++) {
        const res = await deliver(limited.url, `/api/payment-import/stripe/${'y'.repeat(43)}`, '{}', { 'content-type': 'application/json' });
        statuses.push(res.status);
        if (res.status === 429) retryAfter = res.headers.get('retry-after');
      }
      expect(statuses).toEqual([404, 404, 404, 429, 429]);
      expect(Number(retryAfter)).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });

  it('a body over the limit is 413', async () => {
    const small = await startTestServer({ BODY_LIMIT_BYTES: '2048' });
    try {
      const res = await deliver(small.url, `/api/payment-import/stripe/${'z'.repeat(43)}`, 'x'.repeat(5000), { 'content-type': 'application/json' });
      expect(res.status).toBe(413);
    } finally {
      await small.close();
    }
  });
});
