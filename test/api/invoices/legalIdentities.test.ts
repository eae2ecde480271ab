import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server';
import { client, type TestClient } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createDraftInvoice, createSentInvoice } from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';
import { todayVienna } from '../../../shared/domain/dates';
import { resetClock, setClock } from '../../../shared/clock';

/**
 * Finalization (send of a draft rechnung or gutschrift) refuses an invoice that lacks the VAT
 * identities § 11 UStG AT / § 14 UStG DE require, by the rule the ebInterface writer applies
 * (shared/domain/vatIdentities.ts): the PDF it e-mails is the legal invoice.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
let http: TestClient;
beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});
afterAll(async () => server.close());

const year = Number(todayVienna().slice(0, 4));
/** Net 10,000.00 at 20 %: 12,000.00 gross. */
const big = [{ description: 'Projekt', quantity: 1, unitPrice: '10000.00', taxRate: '20' }];
const send = (id: string, token: string) => http.post(`/api/invoices/${id}/send`, { to: 'kunde@example.com' }, { token });

async function expectRefused(id: string, token: string, fields: string[], reason: RegExp) {
  const res = await send(id, token);
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toBe('INVALID_INPUT');
  expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(fields);
  expect(res.body.error.details.map((d: { message: string }) => d.message).join(' ')).toMatch(reason);
  // Refused before the number was taken: still a draft, no number, no delivery, no audit row.
  const row = await db()('invoices').where({ id }).first();
  expect([row.status, row.number, row.sellerSnapshot]).toEqual(['entwurf', null, null]);
  expect(await db()('deliveries').where({ invoiceId: id })).toHaveLength(0);
  return res;
}

describe('recipient UID (§ 11 Abs. 1 Z 3 lit. j UStG): over EUR 10,000 gross to an Austrian business', () => {
  it('12,000.00 EUR to an Austrian GmbH without UID → 400 on customer.vatId; with the UID added the send goes through with number 00001', async () => {
    const { tenant, member, manager } = await createTeam();
    const gmbh = await createCustomer(tenant, { name: 'Franz Huber', company: 'Huber Bau GmbH', address: 'Ring 1\n1010 Wien' });
    const draft = await createDraftInvoice(tenant, member, { customerId: gmbh.id, items: big });
    expect(draft.totalGross).toBe('12000.00');
    const res = await expectRefused(
      draft.id,
      member.token,
      ['customer.vatId'],
      /12000\.00 EUR is over EUR 10,000.*Austrian business.*§ 11 Abs\. 1 Z 3 lit\. j UStG/,
    );
    expect(res.body.error.details[0].message).toContain(gmbh.id);

    expect((await http.put(`/api/customers/${gmbh.id}`, { vatId: 'ATU87654321' }, { token: manager.token })).status).toBe(200);
    const ok = await send(draft.id, member.token);
    expect(ok.status).toBe(202);
    expect(ok.body.invoice).toMatchObject({ status: 'offen', number: `RE-${year}-00001`, customer: { vatId: 'ATU87654321' } });
  });

  it('the UID placeholder ATU00000000 is no UID', async () => {
    const { tenant, member } = await createTeam();
    const gmbh = await createCustomer(tenant, { name: 'Huber', company: 'Huber Bau GmbH', vatId: 'ATU00000000' });
    const draft = await createDraftInvoice(tenant, member, { customerId: gmbh.id, items: big });
    await expectRefused(draft.id, member.token, ['customer.vatId'], /lit\. j/);
  });

  it('a USD invoice to an Austrian business cannot be compared with the limit: it needs the UID whatever the amount', async () => {
    const { tenant, member } = await createTeam();
    const gmbh = await createCustomer(tenant, { name: 'Huber', company: 'Huber Bau GmbH' });
    const draft = await createDraftInvoice(tenant, member, { customerId: gmbh.id, currency: 'USD' });
    // Sent on a day no ECB rate is stored for (other test files store rates of their own days):
    // without a rate the amount cannot be compared (docs/invoices.md).
    setClock(() => Date.parse('2031-06-03T09:00:00Z'));
    try {
      await expectRefused(draft.id, member.token, ['customer.vatId'], /in USD, which cannot be compared with the EUR 10,000 limit/);
    } finally {
      resetClock();
    }
  });

  it('not refused: a consumer (no company name), exactly EUR 10,000.00, a business abroad, a German seller', async () => {
    const { tenant, member } = await createTeam();
    const consumer = await createCustomer(tenant, { name: 'Franz Huber' });
    const abroad = await createCustomer(tenant, { name: 'Müller', company: 'Müller GmbH', country: 'DE', address: 'Hauptstr. 1\n10115 Berlin' });
    const gmbh = await createCustomer(tenant, { name: 'Huber', company: 'Huber Bau GmbH' });
    // 8,333.33 net + 1,666.67 VAT (20 %, rounded half-up) = 10,000.00 gross.
    const exactly = [{ description: 'Projekt', quantity: 1, unitPrice: '8333.33', taxRate: '20' }];
    for (const [customerId, items] of [
      [consumer.id, big],
      [abroad.id, big],
      [gmbh.id, exactly],
    ] as const) {
      const d = await createDraftInvoice(tenant, member, { customerId, items: [...items] });
      const res = await send(d.id, member.token);
      expect([res.status, d.totalGross], JSON.stringify(res.body)).toEqual([202, customerId === gmbh.id ? '10000.00' : '12000.00']);
    }
    const de = await createTeam({ country: 'DE', vatId: 'DE123456789', address: 'Musterstraße 1\n10115 Berlin' });
    const deCustomer = await createCustomer(de.tenant, { name: 'Huber', company: 'Huber GmbH', country: 'DE' });
    const d = await createDraftInvoice(de.tenant, de.member, {
      customerId: deCustomer.id,
      items: [{ description: 'Projekt', quantity: 1, unitPrice: '10100.00', taxRate: '19' }],
    });
    expect((await send(d.id, de.member.token)).status).toBe(202);
  });
});

describe('seller identity (§ 11 Abs. 1 Z 3 lit. i UStG AT, § 14 Abs. 4 Nr. 2 UStG DE)', () => {
  it('an Austrian seller without UID charging VAT over EUR 400 → 400 on settings.vatId (a Steuernummer does not replace the UID in Austria)', async () => {
    const { tenant, member, admin } = await createTeam({ vatId: null, taxNumber: '12-345/6789' });
    const draft = await createDraftInvoice(tenant, member);
    await expectRefused(
      draft.id,
      member.token,
      ['settings.vatId'],
      /charges VAT and the gross total 1494\.60 EUR is over EUR 400.*VAT id \(UID, § 11 Abs\. 1 Z 3 lit\. i UStG/,
    );
    expect((await http.put('/api/settings', { vatId: 'ATU12345678' }, { token: admin.token })).status).toBe(200);
    const ok = await send(draft.id, member.token);
    expect(ok.status).toBe(202);
    expect(ok.body.invoice.number).toBe(`RE-${year}-00001`);
  });

  it('a German seller: the Steuernummer alone is enough; neither → 400 naming vatId and taxNumber', async () => {
    const withNumber = await createTeam({ country: 'DE', vatId: null, taxNumber: '9198011310010', address: 'Musterstraße 1\n10115 Berlin' });
    const items = [{ description: 'Beratung', quantity: 10, unitPrice: '100.00', taxRate: '19' }];
    const ok = await createDraftInvoice(withNumber.tenant, withNumber.member, { items });
    expect((await send(ok.id, withNumber.member.token)).status).toBe(202);

    const neither = await createTeam({ country: 'DE', vatId: null, taxNumber: null, address: 'Musterstraße 1\n10115 Berlin' });
    const draft = await createDraftInvoice(neither.tenant, neither.member, { items });
    await expectRefused(draft.id, neither.member.token, ['settings.vatId'], /USt-IdNr\. \(vatId\) or Steuernummer \(taxNumber\).*§ 14 Abs\. 4 Nr\. 2 UStG/);
  });

  it('a credit note is checked like an invoice', async () => {
    const { tenant, member } = await createTeam({ vatId: null, taxNumber: null });
    const credit = await createDraftInvoice(tenant, member, { type: 'gutschrift' });
    await expectRefused(credit.id, member.token, ['settings.vatId'], /lit\. i/);
  });

  it('not refused: a small-amount invoice up to EUR 400 (§ 11 Abs. 6 UStG), a seller charging no VAT (Kleinunternehmer), a quote', async () => {
    const { tenant, member } = await createTeam({ vatId: null, taxNumber: null });
    const small = await createDraftInvoice(tenant, member, { items: [{ description: 'Kleinigkeit', quantity: 1, unitPrice: '333.33', taxRate: '20' }] });
    expect(small.totalGross).toBe('400.00');
    // A seller charging no VAT is a small business: its 0 % lines are exempt (AT § 6 Abs. 1 Z 27).
    const kleinunternehmer = await createTeam({ vatId: null, taxNumber: null, settings: { smallBusiness: true } });
    const noVat = await createDraftInvoice(kleinunternehmer.tenant, kleinunternehmer.member, {
      items: [{ description: 'Leistung', quantity: 1, unitPrice: '5000.00', taxRate: '0' }],
    });
    // A quote is an offer, not a tax invoice: neither identity is asked for.
    const gmbh = await createCustomer(tenant, { name: 'Huber', company: 'Huber Bau GmbH' });
    const quote = await createDraftInvoice(tenant, member, { type: 'angebot', customerId: gmbh.id, items: big });
    for (const d of [small, quote]) expect((await send(d.id, member.token)).status).toBe(202);
    expect((await send(noVat.id, kleinunternehmer.member.token)).status).toBe(202);
  });

  it("reverse charge (0 % to a business in another member state) needs the seller's UID", async () => {
    const { tenant, member } = await createTeam({ vatId: null });
    const de = await createCustomer(tenant, { name: 'Müller', company: 'Müller GmbH', vatId: 'DE123456789', address: 'Hauptstr. 1\n10115 Berlin' });
    const draft = await createDraftInvoice(tenant, member, {
      customerId: de.id,
      items: [{ description: 'Beratung', quantity: 1, unitPrice: '100.00', taxRate: '0' }],
    });
    await expectRefused(draft.id, member.token, ['settings.vatId'], /reverse-charge.*both VAT ids.*the seller has none/);
  });

  it('several missing identities are reported together', async () => {
    const { tenant, member } = await createTeam({ vatId: null, taxNumber: null });
    const gmbh = await createCustomer(tenant, { name: 'Huber', company: 'Huber Bau GmbH' });
    const draft = await createDraftInvoice(tenant, member, { customerId: gmbh.id, items: big });
    await expectRefused(draft.id, member.token, ['settings.vatId', 'customer.vatId'], /lit\. i.*lit\. j/);
  });

  it('a finalized invoice is re-sent as it was finalized, whatever the settings say now', async () => {
    const { tenant, member, admin } = await createTeam();
    const inv = await createSentInvoice(tenant, member);
    expect((await http.put('/api/settings', { vatId: null }, { token: admin.token })).status).toBe(200);
    const res = await send(inv.id, member.token);
    expect([res.status, res.body.invoice.number]).toEqual([202, inv.number]);
  });
});
