import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createDraftInvoice, createIncomingInvoice, createSentInvoice, cancelInvoice, recordPayment } from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';
import { addDays, todayVienna } from '../../../shared/domain/dates';
import { track } from '../../helpers/audit';

let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;
beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});
afterAll(async () => server.close());

const year = Number(todayVienna().slice(0, 4));
const pay = (amount: string, o: Record<string, unknown> = {}) => ({ amount, date: todayVienna(), method: 'bank_transfer', ...o });

describe('send', () => {
  it('entwurf → offen: number, issueDate today, dueDate from customer terms, snapshots, delivery + outbox job → 202', async () => {
    const { tenant, member } = await createTeam();
    const customer = await createCustomer(tenant, { email: 'buch@kunde.at', paymentTermDays: 30 });
    const d = await createDraftInvoice(tenant, member, { customerId: customer.id, issueDate: '2026-01-01' });
    const res = await http.post(`/api/invoices/${d.id}/send`, { subject: 'Ihre Rechnung', message: 'Hallo' }, { token: member.token });
    expect(res.status).toBe(202);
    const inv = res.body.invoice;
    expect(inv).toMatchObject({
      status: 'offen',
      number: `RE-${year}-00001`,
      issueDate: todayVienna(),
      dueDate: addDays(todayVienna(), 30),
      paymentTermDays: 30,
      sentAt: expect.any(String),
    });
    expect(res.body.delivery).toEqual({ id: expect.any(String), status: 'queued', format: 'pdf' });
    const delivery = await db()('deliveries').where({ id: res.body.delivery.id }).first();
    expect(delivery).toMatchObject({ tenantId: tenant.id, invoiceId: d.id, to: 'buch@kunde.at', subject: 'Ihre Rechnung', message: 'Hallo', status: 'queued' });
    const outbox = await db()('outbox')
      .where({ jobId: `email-${delivery.id}` })
      .first();
    expect(outbox).toMatchObject({ queue: 'email', jobName: 'send-invoice-email', payload: { deliveryId: delivery.id, tenantId: tenant.id } });
    const audit = await db()('auditLog').where({ tenantId: tenant.id, entityId: d.id, action: 'invoice.finalized' });
    expect(audit).toHaveLength(1);

    // the snapshot freezes the customer as it was
    await db()('customers').where({ id: customer.id }).update({ name: 'Umbenannt' });
    expect((await http.get(`/api/invoices/${d.id}`, { token: member.token })).body.customer.name).toBe(customer.name);
  });

  it('default term 14 days; `to` falls back to the customer e-mail, 400 when neither', async () => {
    const { tenant, member } = await createTeam();
    const noMail = await createCustomer(tenant, { email: null });
    const d = await createDraftInvoice(tenant, member, { customerId: noMail.id });
    let res = await http.post(`/api/invoices/${d.id}/send`, {}, { token: member.token });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('to');
    expect((await http.get(`/api/invoices/${d.id}`, { token: member.token })).body.status).toBe('entwurf');
    res = await http.post(`/api/invoices/${d.id}/send`, { to: 'x@y.at' }, { token: member.token });
    expect(res.status).toBe(202);
    expect(res.body.invoice.dueDate).toBe(addDays(todayVienna(), 14));
    expect((await http.post(`/api/invoices/${d.id}/send`, { to: 'not-an-email' }, { token: member.token })).status).toBe(400);
  });

  it('re-sending offen creates a new delivery without a state change or new number', async () => {
    const { tenant, member } = await createTeam();
    const inv = await createSentInvoice(tenant, member);
    const res = await http.post(`/api/invoices/${inv.id}/send`, { to: 'zweit@kunde.at' }, { token: member.token });
    expect(res.status).toBe(202);
    expect(res.body.invoice).toMatchObject({ status: 'offen', number: inv.number });
    expect(await db()('deliveries').where({ invoiceId: inv.id })).toHaveLength(2);
  });

  it('numbers: gapless per type and year, separate series for AN and GS', async () => {
    const { tenant, member, manager } = await createTeam();
    const r1 = await createSentInvoice(tenant, member);
    const q1 = await createSentInvoice(tenant, member, { type: 'angebot' });
    const r2 = await createSentInvoice(tenant, member);
    const g1 = await createSentInvoice(tenant, member, { type: 'gutschrift' });
    expect([r1.number, r2.number, q1.number, g1.number]).toEqual([`RE-${year}-00001`, `RE-${year}-00002`, `AN-${year}-00001`, `GS-${year}-00001`]);
    const { creditNoteId } = await cancelInvoice(tenant, manager, r1.id);
    expect((await http.get(`/api/invoices/${creditNoteId}`, { token: member.token })).body.number).toBe(`GS-${year}-00002`);
    // a failed send (no recipient) does not consume a number
    const noMail = await createCustomer(tenant, { email: null });
    const d = await createDraftInvoice(tenant, member, { customerId: noMail.id });
    expect((await http.post(`/api/invoices/${d.id}/send`, {}, { token: member.token })).status).toBe(400);
    expect((await createSentInvoice(tenant, member)).number).toBe(`RE-${year}-00003`);
  });

  it('refused: storniert and eingangsrechnung → 400 IMMUTABLE; deleted customer → 400', async () => {
    const { tenant, member, manager } = await createTeam();
    const inv = await createSentInvoice(tenant, member);
    await cancelInvoice(tenant, manager, inv.id);
    let res = await http.post(`/api/invoices/${inv.id}/send`, { to: 'a@b.at' }, { token: member.token });
    expect([res.status, res.body.error.code]).toEqual([400, 'IMMUTABLE']);
    const incoming = await createIncomingInvoice(tenant, member);
    res = await http.post(`/api/invoices/${incoming.id}/send`, { to: 'a@b.at' }, { token: member.token });
    expect([res.status, res.body.error.code]).toEqual([400, 'IMMUTABLE']);
    const c = await createCustomer(tenant);
    const d = await createDraftInvoice(tenant, member, { customerId: c.id });
    expect((await http.delete(`/api/customers/${c.id}`, { token: manager.token })).status).toBe(204);
    res = await http.post(`/api/invoices/${d.id}/send`, { to: 'a@b.at' }, { token: member.token });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('customerId');
  });
});

describe('payments', () => {
  it('offen → teilbezahlt → bezahlt; response 201 {payment, invoice}', async () => {
    const { tenant, member } = await createTeam();
    const inv = await createSentInvoice(tenant, member); // 1494.60
    let res = await http.post(`/api/invoices/${inv.id}/payments`, pay('494.60', { method: 'sepa_direct_debit' }), { token: member.token });
    expect(res.status).toBe(201);
    expect(res.body.payment).toEqual({
      id: expect.any(String),
      amount: '494.60',
      date: todayVienna(),
      method: 'sepa_direct_debit',
      createdAt: expect.any(String),
    });
    expect(res.body.invoice).toMatchObject({ status: 'teilbezahlt', amountPaid: '494.60', amountDue: '1000.00' });
    expect(res.body.invoice.payments).toHaveLength(1);
    res = await http.post(`/api/invoices/${inv.id}/payments`, pay('1000', { date: '2020-01-01' }), { token: member.token });
    expect(res.status).toBe(201);
    expect(res.body.invoice).toMatchObject({ status: 'bezahlt', amountPaid: '1494.60', amountDue: '0.00' });
    res = await http.post(`/api/invoices/${inv.id}/payments`, pay('0.01'), { token: member.token });
    expect([res.status, res.body.error.code]).toEqual([422, 'UNPROCESSABLE']);
  });

  it('amount > amountDue → 422; zero, negative, malformed, bad method/date → 400', async () => {
    const { tenant, member } = await createTeam();
    const inv = await createSentInvoice(tenant, member);
    let res = await http.post(`/api/invoices/${inv.id}/payments`, pay('1494.61'), { token: member.token });
    expect(res.status).toBe(422);
    expect(res.body.error.amountDue).toBe('1494.60');
    for (const body of [
      pay('0'),
      pay('0.00'),
      pay('-5.00'),
      pay('abc'),
      pay('1.001'),
      { ...pay('1.00'), amount: 1 },
      pay('1.00', { method: 'bitcoin' }),
      pay('1.00', { date: '2026-02-30' }),
      pay('1.00', { date: addDays(todayVienna(), 1) }),
      { amount: '1.00', method: 'cash' },
      { ...pay('1.00'), note: 'x' },
    ]) {
      res = await http.post(`/api/invoices/${inv.id}/payments`, body, { token: member.token });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await http.get(`/api/invoices/${inv.id}`, { token: member.token })).body.amountPaid).toBe('0.00');
  });

  it('refused states/types → 422: entwurf, bezahlt, storniert, angebot', async () => {
    const { tenant, member, manager } = await createTeam();
    const draft = await createDraftInvoice(tenant, member);
    const quote = await createSentInvoice(tenant, member, { type: 'angebot' });
    const cancelled = await createSentInvoice(tenant, member);
    await cancelInvoice(tenant, manager, cancelled.id);
    for (const id of [draft.id, quote.id, cancelled.id]) {
      const res = await http.post(`/api/invoices/${id}/payments`, pay('1.00'), { token: member.token });
      expect([res.status, res.body.error.code]).toEqual([422, 'UNPROCESSABLE']);
    }
  });
});

describe('cancel', () => {
  it('offen → storniert with a linked credit note (GS number, same items, settled by offset: bezahlt)', async () => {
    const { tenant, member, manager } = await createTeam();
    const inv = await createSentInvoice(tenant, member);
    const res = await http.post(`/api/invoices/${inv.id}/cancel`, {}, { token: manager.token });
    expect(res.status).toBe(200);
    expect(res.body.invoice).toMatchObject({ status: 'storniert', amountDue: '0.00', creditNoteId: res.body.creditNote.id });
    expect(res.body.creditNote).toMatchObject({
      type: 'gutschrift',
      status: 'bezahlt',
      number: expect.stringMatching(/^GS-\d{4}-\d{5}$/),
      relatedInvoiceId: inv.id,
      relatedInvoiceNumber: inv.number,
      customerId: inv.customerId,
      totalNet: inv.totalNet,
      totalTax: inv.totalTax,
      totalGross: inv.totalGross,
      taxBreakdown: inv.taxBreakdown,
      amountPaid: inv.totalGross,
      amountDue: '0.00',
      issueDate: todayVienna(),
    });
    expect(res.body.creditNote.items).toEqual(inv.items);
  });

  it('the Storno credit note describes the original supply: its service date, else its issue date, not the cancellation day', async () => {
    const { tenant, member, manager } = await createTeam();
    const withoutDate = await createSentInvoice(tenant, member);
    const withDate = await createSentInvoice(tenant, member, { serviceDate: '2026-01-10' });
    // Issued on 15.01.2026 (without a service date its Leistungsdatum is the issue date), cancelled today.
    await db()('invoices').whereIn('id', [withoutDate.id, withDate.id]).update({ issueDate: '2026-01-15' });
    for (const [inv, serviceDate] of [
      [withoutDate, '2026-01-15'],
      [withDate, '2026-01-10'],
    ] as const) {
      const res = await http.post(`/api/invoices/${inv.id}/cancel`, {}, { token: manager.token });
      expect(res.status).toBe(200);
      expect(res.body.invoice).toMatchObject({ issueDate: '2026-01-15', serviceDate: inv.serviceDate });
      expect(res.body.creditNote).toMatchObject({ issueDate: todayVienna(), serviceDate, serviceEndDate: null });
    }
  });

  it('teilbezahlt → storniert; the credit note owes the paid amount back (teilbezahlt), its refund settles it', async () => {
    const { tenant, member, manager } = await createTeam();
    const inv = await createSentInvoice(tenant, member);
    await recordPayment(tenant, member, inv.id, { amount: '500.00' });
    const res = await http.post(`/api/invoices/${inv.id}/cancel`, {}, { token: manager.token });
    expect(res.status).toBe(200);
    expect(res.body.invoice).toMatchObject({ status: 'storniert', amountPaid: '500.00' });
    expect(res.body.creditNote).toMatchObject({ status: 'teilbezahlt', amountPaid: '994.60', amountDue: '500.00' });
    const refund = await http.post(`/api/invoices/${res.body.creditNote.id}/payments`, pay('500.00'), { token: member.token });
    expect(refund.status).toBe(201);
    expect(refund.body.invoice.status).toBe('bezahlt');
  });

  it('refused: entwurf, bezahlt, storniert, gutschrift → 400 IMMUTABLE; quotes and incoming invoices are voided without a credit note', async () => {
    const { tenant, member, manager } = await createTeam();
    const draft = await createDraftInvoice(tenant, member);
    const paid = await createSentInvoice(tenant, member);
    await recordPayment(tenant, member, paid.id, { amount: paid.totalGross });
    const cancelled = await createSentInvoice(tenant, member);
    const { creditNoteId } = await cancelInvoice(tenant, manager, cancelled.id);
    for (const id of [draft.id, paid.id, cancelled.id, creditNoteId!]) {
      const res = await http.post(`/api/invoices/${id}/cancel`, {}, { token: manager.token });
      expect([res.status, res.body.error.code]).toEqual([400, 'IMMUTABLE']);
    }
    const quote = await createSentInvoice(tenant, member, { type: 'angebot' });
    const q = await http.post(`/api/invoices/${quote.id}/cancel`, {}, { token: manager.token });
    expect(q.status).toBe(200);
    expect(q.body).toMatchObject({ invoice: { status: 'storniert' }, creditNote: null });
    const incoming = await createIncomingInvoice(tenant, member);
    const i = await http.post(`/api/invoices/${incoming.id}/cancel`, {}, { token: manager.token });
    expect(i.body).toMatchObject({ invoice: { status: 'storniert' }, creditNote: null });
  });
});

describe('creditNoteId: the credit note the cancellation created, on storniert invoices only', () => {
  const manualCredit = (customerId: string, relatedInvoiceId: string, token: string) =>
    http.post(
      '/api/invoices',
      { type: 'gutschrift', customerId, relatedInvoiceId, items: [{ description: 'Teilgutschrift', quantity: 1, unitPrice: '10.00', taxRate: '20' }] },
      { token },
    );

  it('a manual credit note is not the Storno: null while offen, the Storno after cancel, single read and list agree', async () => {
    const { tenant, member, manager } = await createTeam();
    const inv = await createSentInvoice(tenant, member);
    const draftCredit = await manualCredit(inv.customerId!, inv.id, member.token);
    expect(draftCredit.status).toBe(201);
    const sentCredit = await manualCredit(inv.customerId!, inv.id, member.token);
    expect((await http.post(`/api/invoices/${sentCredit.body.id}/send`, { to: 'a@b.at' }, { token: member.token })).status).toBe(202);

    const open = await http.get(`/api/invoices/${inv.id}`, { token: member.token });
    expect(open.body).toMatchObject({ status: 'offen', creditNoteId: null });
    const openList = await http.get(`/api/invoices?type=rechnung&status=offen`, { token: member.token });
    expect(openList.body.data.find((x: { id: string }) => x.id === inv.id).creditNoteId).toBeNull();

    const cancel = await http.post(`/api/invoices/${inv.id}/cancel`, {}, { token: manager.token });
    expect(cancel.status).toBe(200);
    const storno = cancel.body.creditNote.id as string;
    expect([draftCredit.body.id, sentCredit.body.id]).not.toContain(storno);
    expect(cancel.body.invoice.creditNoteId).toBe(storno);
    expect((await http.get(`/api/invoices/${inv.id}`, { token: member.token })).body).toMatchObject({ status: 'storniert', creditNoteId: storno });
    const list = await http.get(`/api/invoices?status=storniert`, { token: member.token });
    expect(list.body.data.find((x: { id: string }) => x.id === inv.id).creditNoteId).toBe(storno);
    // The manual credit notes keep their own link to the invoice, and are nobody's Storno.
    for (const id of [draftCredit.body.id, sentCredit.body.id]) {
      expect((await http.get(`/api/invoices/${id}`, { token: member.token })).body).toMatchObject({ relatedInvoiceId: inv.id, creditNoteId: null });
    }
  });

  it('the database keeps the link on cancelled sales invoices only, one invoice per credit note', async () => {
    const { tenant, member, manager } = await createTeam();
    const open = await createSentInvoice(tenant, member);
    const cancelled = await createSentInvoice(tenant, member);
    const { creditNoteId } = await cancelInvoice(tenant, manager, cancelled.id);
    await expect(db()('invoices').where({ id: open.id }).update({ creditNoteId })).rejects.toThrow(/invoices_credit_note_check|invoices_credit_note_unique/);
    await db()('invoices').where({ id: open.id }).update({ status: 'storniert' });
    await expect(db()('invoices').where({ id: open.id }).update({ creditNoteId })).rejects.toThrow(/invoices_credit_note_unique/);
  });

  it('migration backfill: from the cancel audit row, else the credit note’s audit row, else the same transaction’s time; never a manual one', async () => {
    const { tenant, member, manager } = await createTeam();
    const cases: Array<{ id: string; storno: string }> = [];
    for (let i = 0; i < 3; i++) {
      const inv = await createSentInvoice(tenant, member);
      expect((await manualCredit(inv.customerId!, inv.id, member.token)).status).toBe(201);
      const { creditNoteId } = await cancelInvoice(tenant, manager, inv.id);
      cases.push({ id: inv.id, storno: creditNoteId! });
    }
    const [byCancelAudit, byCreditAudit, byTime] = cases;
    // A cancelled invoice whose Storno cannot be identified (no audit rows, no matching time).
    const unknown = await createSentInvoice(tenant, member);
    expect((await manualCredit(unknown.customerId!, unknown.id, member.token)).status).toBe(201);
    await db()('invoices').where({ id: unknown.id }).update({ status: 'storniert', cancelledAt: db().fn.now() });

    await db()('invoices')
      .whereIn(
        'id',
        cases.map((c) => c.id),
      )
      .update({ creditNoteId: null });
    // Only the audit rows can tell for the first two: their cancellation time no longer matches.
    await db()('invoices')
      .whereIn('id', [byCancelAudit.id, byCreditAudit.id])
      .update({ cancelledAt: db().raw("cancelled_at - interval '1 second'") });
    await db()('auditLog').where({ entityId: byCreditAudit.id, action: 'invoice.cancelled' }).delete();
    await db()('auditLog').whereIn('entityId', [byTime.id, byTime.storno]).delete();
    const { backfillCreditNoteIds } = await import('../../../migrations/20261126100000_invoice_credit_note_link');
    await backfillCreditNoteIds(db());

    const links = await db()('invoices')
      .where({ tenantId: tenant.id })
      .whereIn('id', [...cases.map((c) => c.id), unknown.id])
      .select('id', 'creditNoteId');
    const by = new Map(links.map((r: { id: string; creditNoteId: string | null }) => [r.id, r.creditNoteId]));
    for (const c of [byCancelAudit, byCreditAudit, byTime]) expect(by.get(c.id)).toBe(c.storno);
    expect(by.get(unknown.id)).toBeNull();
  });
});

describe('convert', () => {
  it('angebot (entwurf or offen) → new draft rechnung with the same customer and items, linked to the quote', async () => {
    const { tenant, member } = await createTeam();
    for (const quote of [
      await createDraftInvoice(tenant, member, { type: 'angebot', detailsMarkdown: '# Details', notes: 'N' }),
      await createSentInvoice(tenant, member, { type: 'angebot' }),
    ]) {
      const res = await http.post(`/api/invoices/${quote.id}/convert`, {}, { token: member.token });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        type: 'rechnung',
        status: 'entwurf',
        number: null,
        customerId: quote.customerId,
        relatedInvoiceId: quote.id,
        detailsMarkdown: null,
        notes: quote.notes,
        totalGross: quote.totalGross,
        taxBreakdown: quote.taxBreakdown,
      });
      expect(res.body.items).toEqual(quote.items);
      expect((await http.get(`/api/invoices/${quote.id}`, { token: member.token })).body.status).toBe(quote.status);
    }
  });

  it('a PUT on the converted draft keeps the link to the quote (omitted, echoed or null); another id → 400', async () => {
    const { tenant, member, manager } = await createTeam();
    const quote = await createSentInvoice(tenant, member, { type: 'angebot' });
    const draft = (await http.post(`/api/invoices/${quote.id}/convert`, {}, { token: member.token })).body;
    const body = { customerId: draft.customerId, items: [{ description: 'Neu', quantity: 2, unitPrice: '50.00', taxRate: '20' }] };

    let res = await http.put(`/api/invoices/${draft.id}`, { ...body, notes: 'ohne Link' }, { token: manager.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ relatedInvoiceId: quote.id, relatedInvoiceNumber: quote.number, notes: 'ohne Link', totalGross: '120.00' });
    // a client that sends back what it read (GET → edit → PUT) echoes the link
    res = await http.put(`/api/invoices/${draft.id}`, { ...body, relatedInvoiceId: quote.id }, { token: manager.token });
    expect(res.status).toBe(200);
    expect(res.body.relatedInvoiceId).toBe(quote.id);
    res = await http.put(`/api/invoices/${draft.id}`, { ...body, relatedInvoiceId: null }, { token: manager.token });
    expect(res.status).toBe(200);
    expect(res.body.relatedInvoiceId).toBe(quote.id);
    // pointing a sales invoice somewhere else is still refused
    const other = await createSentInvoice(tenant, member);
    res = await http.put(`/api/invoices/${draft.id}`, { ...body, relatedInvoiceId: other.id }, { token: manager.token });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'relatedInvoiceId', message: 'is only allowed on credit notes (gutschrift)' }]);
    expect((await http.get(`/api/invoices/${draft.id}`, { token: member.token })).body.relatedInvoiceId).toBe(quote.id);
  });

  it('a credit note draft: relatedInvoiceId is content, a full PUT sets or clears it', async () => {
    const { tenant, member, manager } = await createTeam();
    const inv = await createSentInvoice(tenant, member);
    const gs = await createDraftInvoice(tenant, member, { type: 'gutschrift', customerId: inv.customerId, relatedInvoiceId: inv.id });
    const body = { customerId: gs.customerId, items: [{ description: 'Gutschrift', quantity: 1, unitPrice: '10.00', taxRate: '20' }] };
    let res = await http.put(`/api/invoices/${gs.id}`, { ...body, relatedInvoiceId: inv.id }, { token: manager.token });
    expect([res.status, res.body.relatedInvoiceId]).toEqual([200, inv.id]);
    res = await http.put(`/api/invoices/${gs.id}`, body, { token: manager.token });
    expect([res.status, res.body.relatedInvoiceId]).toEqual([200, null]);
  });

  it('refused: not a quote, or a cancelled quote → 400 IMMUTABLE', async () => {
    const { tenant, member, manager } = await createTeam();
    const inv = await createDraftInvoice(tenant, member);
    const quote = await createSentInvoice(tenant, member, { type: 'angebot' });
    await cancelInvoice(tenant, manager, quote.id);
    for (const id of [inv.id, quote.id]) {
      const res = await http.post(`/api/invoices/${id}/convert`, {}, { token: member.token });
      expect([res.status, res.body.error.code]).toEqual([400, 'IMMUTABLE']);
    }
  });
});

describe('audit log: every change writes one row with actor, action, entity and time', () => {
  it('invoices: create, update, send, payment, cancel (+ credit note), convert, delete', async () => {
    const { tenant, member, manager } = await createTeam();
    const customer = await createCustomer(tenant);
    const as = (u: { id: string }, entityId: string, action: string) => ({ action, entityType: 'invoice', entityId, actorUserId: u.id });
    const items = [{ description: 'Leistung', quantity: 1, unitPrice: '100.00', taxRate: '20' }];

    const created = await track(
      tenant.id,
      (r: any) => [as(member, r.body.id, 'invoice.created')],
      () => http.post('/api/invoices', { type: 'rechnung', customerId: customer.id, items }, { token: member.token }),
    );
    const id = created.body.id;
    await track(
      tenant.id,
      () => [as(manager, id, 'invoice.updated')],
      () => http.put(`/api/invoices/${id}`, { customerId: customer.id, items, notes: 'x' }, { token: manager.token }),
    );
    await track(
      tenant.id,
      () => [as(member, id, 'invoice.finalized')],
      () => http.post(`/api/invoices/${id}/send`, { to: 'a@b.at' }, { token: member.token }),
    );
    // the meta update of a finalized invoice is a change too
    await track(
      tenant.id,
      () => [as(manager, id, 'invoice.updated')],
      () => http.put(`/api/invoices/${id}`, { notes: 'y' }, { token: manager.token }),
    );
    await track(
      tenant.id,
      () => [as(member, id, 'invoice.payment_recorded')],
      () => http.post(`/api/invoices/${id}/payments`, pay('20.00'), { token: member.token }),
    );
    const cancelled = await track(
      tenant.id,
      (r: any) => [as(manager, r.body.creditNote.id, 'invoice.credit_note_created'), as(manager, id, 'invoice.cancelled')],
      () => http.post(`/api/invoices/${id}/cancel`, {}, { token: manager.token }),
    );
    expect(cancelled.status).toBe(200);
    await track(
      tenant.id,
      () => [as(manager, id, 'invoice.deleted')],
      () => http.delete(`/api/invoices/${id}`, { token: manager.token }),
    );

    const quote = await createDraftInvoice(tenant, member, { type: 'angebot', customerId: customer.id });
    const converted = await track(
      tenant.id,
      (r: any) => [as(member, r.body.id, 'invoice.converted')],
      () => http.post(`/api/invoices/${quote.id}/convert`, {}, { token: member.token }),
    );
    expect(converted.status).toBe(201);
    const row = await db()('auditLog').where({ tenantId: tenant.id, entityId: converted.body.id, action: 'invoice.converted' }).first();
    expect(row.data).toMatchObject({ fromQuote: quote.id });
  });

  it('refused transitions write no audit row', async () => {
    const { tenant, member, manager } = await createTeam();
    const inv = await createSentInvoice(tenant, member);
    await track(
      tenant.id,
      () => [],
      () => http.post(`/api/invoices/${inv.id}/payments`, pay('99999.00'), { token: member.token }),
    );
    await track(
      tenant.id,
      () => [],
      () => http.delete(`/api/invoices/${inv.id}`, { token: manager.token }),
    );
    await track(
      tenant.id,
      () => [],
      () => http.put(`/api/invoices/${inv.id}`, { paymentTermDays: 1 }, { token: manager.token }),
    );
  });
});
