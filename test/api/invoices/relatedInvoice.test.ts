import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import {
  cancelInvoice,
  createCustomer,
  createDraftInvoice,
  createIncomingInvoice,
  createSentInvoice,
  createSupplier,
  recordPayment,
} from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';
import { runInTransaction } from '../../../shared/outbox';
import { createIncomingInvoiceFromEvent } from '../../../shared/commands/webhooks/createIncomingInvoiceFromEvent';
import type { NormalizedEvent } from '../../../shared/providers/payments/types';
import { todayVienna } from '../../../shared/domain/dates';

/**
 * A credit note's relatedInvoiceId is the invoice it corrects (PDF "zur Rechnung Nr. …", CII BT-25,
 * ebInterface RelatedDocument): a finalized rechnung of the same customer in the same currency.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;
beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});
afterAll(async () => server.close());

const creditItems = [{ description: 'Teilgutschrift', quantity: 1, unitPrice: '10.00', taxRate: '20' }];
const credit = (customerId: string, relatedInvoiceId: string, token: string, extra: Record<string, unknown> = {}) =>
  http.post('/api/invoices', { type: 'gutschrift', customerId, relatedInvoiceId, items: creditItems, ...extra }, { token });

function expectRefusedOnRelated(res: { status: number; body: any }, message: RegExp) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toBe('INVALID_INPUT');
  expect(res.body.error.details).toEqual([{ field: 'relatedInvoiceId', message: expect.stringMatching(message) }]);
}

describe('refused: relatedInvoiceId of a credit note that is not a finalized invoice of its customer and currency → 400', () => {
  it('a quote, an incoming invoice, another credit note (a Storno and a manual one)', async () => {
    const { tenant, member, manager } = await createTeam();
    const customer = await createCustomer(tenant);
    const quote = await createSentInvoice(tenant, member, { type: 'angebot', customerId: customer.id });
    const incoming = await createIncomingInvoice(tenant, member);
    const cancelled = await createSentInvoice(tenant, member, { customerId: customer.id });
    const { creditNoteId: storno } = await cancelInvoice(tenant, manager, cancelled.id);
    const manualCredit = await createSentInvoice(tenant, member, { type: 'gutschrift', customerId: customer.id });
    for (const [id, what] of [
      [quote.id, /not a quote \(angebot\)/],
      [incoming.id, /not an incoming invoice/],
      [storno!, /not a credit note/],
      [manualCredit.id, /not a credit note/],
    ] as const) {
      expectRefusedOnRelated(await credit(customer.id, id, member.token), what);
    }
    expect(await db()('invoices').where({ tenantId: tenant.id, type: 'gutschrift', status: 'entwurf' })).toHaveLength(0);
  });

  it('a draft invoice (it has no number yet)', async () => {
    const { tenant, member } = await createTeam();
    const draft = await createDraftInvoice(tenant, member);
    expectRefusedOnRelated(await credit(draft.customerId!, draft.id, member.token), /finalized \(sent\) invoice, not a draft/);
  });

  it("another customer's invoice, another tenant's invoice, a deleted one", async () => {
    const { tenant, member, manager } = await createTeam();
    const inv = await createSentInvoice(tenant, member);
    const other = await createCustomer(tenant);
    expectRefusedOnRelated(await credit(other.id, inv.id, member.token), /belongs to another customer/);

    const foreign = await createTeam();
    const theirs = await createSentInvoice(foreign.tenant, foreign.member);
    expectRefusedOnRelated(await credit(inv.customerId!, theirs.id, member.token), /^invoice does not exist$/);

    const gone = await createSentInvoice(tenant, member, { customerId: inv.customerId! });
    await cancelInvoice(tenant, manager, gone.id);
    expect((await http.delete(`/api/invoices/${gone.id}`, { token: manager.token })).status).toBe(204);
    expectRefusedOnRelated(await credit(inv.customerId!, gone.id, member.token), /^invoice does not exist$/);
  });

  it('another currency: a USD invoice is corrected by a USD credit note', async () => {
    const { tenant, member } = await createTeam();
    // A USD invoice is finalized with an exchange rate (docs/exchange-rates.md); a manual one needs no ECB feed.
    const usd = await createSentInvoice(tenant, member, { currency: 'USD', exchangeRate: { rate: '1.08', date: '2026-01-02', source: 'manual' } });
    expectRefusedOnRelated(await credit(usd.customerId!, usd.id, member.token), /is in USD, the credit note in EUR/);
    expect((await credit(usd.customerId!, usd.id, member.token, { currency: 'USD' })).status).toBe(201);
  });

  it('a full PUT of a credit note draft is checked the same way', async () => {
    const { tenant, member, manager } = await createTeam();
    const inv = await createSentInvoice(tenant, member);
    const quote = await createSentInvoice(tenant, member, { type: 'angebot', customerId: inv.customerId! });
    const created = await credit(inv.customerId!, inv.id, member.token);
    expect(created.status).toBe(201);
    const body = { customerId: inv.customerId, items: creditItems };
    expectRefusedOnRelated(
      await http.put(`/api/invoices/${created.body.id}`, { ...body, relatedInvoiceId: quote.id }, { token: manager.token }),
      /not a quote/,
    );
    // Re-pointing the credit note to another customer while keeping the link is refused too.
    const other = await createCustomer(tenant);
    expectRefusedOnRelated(
      await http.put(`/api/invoices/${created.body.id}`, { ...body, customerId: other.id, relatedInvoiceId: inv.id }, { token: manager.token }),
      /another customer/,
    );
    expect((await http.get(`/api/invoices/${created.body.id}`, { token: member.token })).body.relatedInvoiceId).toBe(inv.id);
  });

  it('send re-checks a draft written before the rule (pointing at a quote): 400, still a draft without number', async () => {
    const { tenant, member } = await createTeam();
    const inv = await createSentInvoice(tenant, member);
    const quote = await createSentInvoice(tenant, member, { type: 'angebot', customerId: inv.customerId! });
    const created = await credit(inv.customerId!, inv.id, member.token);
    await db()('invoices').where({ id: created.body.id }).update({ relatedInvoiceId: quote.id });
    expectRefusedOnRelated(await http.post(`/api/invoices/${created.body.id}/send`, { to: 'a@b.at' }, { token: member.token }), /not a quote/);
    expect(await db()('invoices').where({ id: created.body.id }).first('status', 'number')).toEqual({ status: 'entwurf', number: null });
  });
});

describe('kept: the links that are right', () => {
  it('a credit note to a finalized invoice (offen, bezahlt, storniert) of its customer: created, sent, shown with the invoice number', async () => {
    const { tenant, member, manager } = await createTeam();
    const open = await createSentInvoice(tenant, member);
    const paid = await createSentInvoice(tenant, member, { customerId: open.customerId! });
    await recordPayment(tenant, member, paid.id, { amount: paid.totalGross });
    const cancelled = await createSentInvoice(tenant, member, { customerId: open.customerId! });
    await cancelInvoice(tenant, manager, cancelled.id);
    for (const inv of [open, paid, cancelled]) {
      const created = await credit(inv.customerId!, inv.id, member.token);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const sent = await http.post(`/api/invoices/${created.body.id}/send`, { to: 'a@b.at' }, { token: member.token });
      expect(sent.status, JSON.stringify(sent.body)).toBe(202);
      expect(sent.body.invoice).toMatchObject({ type: 'gutschrift', status: 'offen', relatedInvoiceId: inv.id, relatedInvoiceNumber: inv.number });
    }
  });

  it('a rechnung converted from a quote keeps relatedInvoiceId → the quote through PUT and send', async () => {
    const { tenant, member, manager } = await createTeam();
    const quote = await createSentInvoice(tenant, member, { type: 'angebot' });
    const draft = (await http.post(`/api/invoices/${quote.id}/convert`, {}, { token: member.token })).body;
    expect(draft.relatedInvoiceId).toBe(quote.id);
    const put = await http.put(
      `/api/invoices/${draft.id}`,
      { customerId: draft.customerId, items: creditItems, relatedInvoiceId: quote.id },
      { token: manager.token },
    );
    expect([put.status, put.body.relatedInvoiceId]).toEqual([200, quote.id]);
    const sent = await http.post(`/api/invoices/${draft.id}/send`, { to: 'a@b.at' }, { token: member.token });
    expect(sent.status).toBe(202);
    expect(sent.body.invoice).toMatchObject({ type: 'rechnung', status: 'offen', relatedInvoiceId: quote.id });
  });

  it('the Storno credit note created by cancel points at the cancelled invoice', async () => {
    const { tenant, member, manager } = await createTeam();
    const inv = await createSentInvoice(tenant, member);
    const res = await http.post(`/api/invoices/${inv.id}/cancel`, {}, { token: manager.token });
    expect(res.status).toBe(200);
    expect(res.body.creditNote).toMatchObject({ type: 'gutschrift', relatedInvoiceId: inv.id, relatedInvoiceNumber: inv.number });
  });

  it('an incoming refund links to the incoming invoice of its payment', async () => {
    const { tenant } = await createTeam();
    const supplier = await createSupplier(tenant);
    const event = (kind: 'payment' | 'refund', id: string) =>
      ({
        provider: 'stripe',
        eventId: `evt_${id}`,
        eventType: kind === 'refund' ? 'charge.refunded' : 'invoice.payment_succeeded',
        kind,
        externalId: id,
      }) as NormalizedEvent;
    const draft = (id: string, totalGross: string) => ({ externalId: id, invoiceDate: todayVienna(), totalGross, currency: 'EUR', description: id });
    const refund = await runInTransaction(async (trx) => {
      const payment = await createIncomingInvoiceFromEvent(trx, {
        tenantId: tenant.id,
        event: event('payment', 'in_1'),
        draft: draft('in_1', '20.00'),
        supplierId: supplier.id,
        relatedInvoiceId: null,
      });
      const r = await createIncomingInvoiceFromEvent(trx, {
        tenantId: tenant.id,
        event: event('refund', 're_1'),
        draft: draft('re_1', '-5.00'),
        supplierId: supplier.id,
        relatedInvoiceId: payment.id,
      });
      return { paymentId: payment.id, refundId: r.id };
    });
    expect(await db()('invoices').where({ id: refund.refundId }).first('type', 'relatedInvoiceId', 'totalGross')).toEqual({
      type: 'eingangsrechnung',
      relatedInvoiceId: refund.paymentId,
      totalGross: '-5.00',
    });
  });
});
