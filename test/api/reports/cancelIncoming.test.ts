import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { db } from '../../../shared/db';
import type { NormalizedEvent } from '../../../shared/providers/payments/types';
import { CANCELLATION_SOURCE } from '../../../shared/ledger/posting';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createSupplier } from '../../helpers/invoiceFactory';
import { datevBookings } from '../../helpers/datevCsv';
import { bookEvent, normalizedPayment } from '../../helpers/normalizedEvents';

/**
 * A webhook payment in a foreign currency creates a paid incoming invoice that blocks the month's
 * reports (422 FOREIGN_CURRENCY). The documented remedy — cancel it and enter the EUR document —
 * must work: a paid incoming invoice can be cancelled, is then void (out of input tax, DATEV, BWA
 * and the currency check, its payment included), and a posted one gets a reversing entry.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const stripePayment = (over: Partial<NormalizedEvent> = {}) => normalizedPayment({ counterparty: { name: 'Stripe Supplier' }, ...over });

const bookingKeys = (raw: Buffer) => datevBookings(raw).map((f) => [f[0], f[1], f[6], f[7], f[10]].join('|'));

describe('cancelling a paid incoming invoice', () => {
  it('a USD webhook incoming invoice blocks U30, DATEV and BWA with 422; after cancel they answer 200 without it', async () => {
    const team = await createTeam({ country: 'AT', taxNumber: '12-345/6789' });
    const supplier = await createSupplier(team.tenant, { name: 'US Cloud Inc.' });
    const usd = await bookEvent(team.tenant.id, stripePayment({ amount: '50.00', currency: 'USD' }), { autoPost: true, defaultSupplierId: supplier.id });
    const invoiceId = usd.invoiceId!;
    const row = await db()('invoices').where({ id: invoiceId }).first();
    expect(row).toMatchObject({ type: 'eingangsrechnung', status: 'bezahlt', currency: 'USD' });
    // Not posted: the ledger is in EUR.
    expect(await db()('journalEntries').where({ tenantId: team.tenant.id })).toHaveLength(0);

    const viewer = client(server.url, { token: team.viewer.token });
    const paths = ['/api/reports/ust?year=2026&month=11', '/api/reports/datev?year=2026&month=11', '/api/reports/bwa?year=2026'];
    for (const path of paths) {
      const res = await viewer.get(path);
      expect(res.status, path).toBe(422);
      expect(res.body.error.reason, path).toBe('FOREIGN_CURRENCY');
    }

    // The documented remedy: cancel (a manager), then enter the EUR document.
    const cancel = await client(server.url, { token: team.manager.token }).post(`/api/invoices/${invoiceId}/cancel`);
    expect(cancel.status).toBe(200);
    expect(cancel.body.invoice.status).toBe('storniert');
    expect(cancel.body.creditNote).toBeNull();
    expect(await db()('journalEntries').where({ tenantId: team.tenant.id })).toHaveLength(0);

    for (const path of paths) expect((await viewer.get(path)).status, path).toBe(200);
    const u30 = await viewer.get('/api/reports/ust?year=2026&month=11');
    expect(u30.body.kennzahlen['060']).toBe('0.00');
    // Neither the void invoice nor its USD payment record is exported.
    expect(bookingKeys((await viewer.get('/api/reports/datev?year=2026&month=11')).raw)).toEqual([]);
    const bwa = await viewer.get('/api/reports/bwa?year=2026');
    expect(bwa.body.total.totalExpenses.current).toBe('0.00');

    // A cancelled invoice cannot be cancelled again.
    const again = await client(server.url, { token: team.manager.token }).post(`/api/invoices/${invoiceId}/cancel`);
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe('IMMUTABLE');
  });

  it('an EUR auto-posted incoming invoice: cancel posts the reversal in the same transaction; debits = credits, the accounts net to zero', async () => {
    const team = await createTeam({ country: 'AT' });
    const supplier = await createSupplier(team.tenant, { name: 'Stripe Supplier' });
    const payment = stripePayment({ amount: '10.00' });
    const paid = await bookEvent(team.tenant.id, payment, { autoPost: true, defaultSupplierId: supplier.id });
    const entry = await db()('journalEntries').where({ tenantId: team.tenant.id, sourceId: paid.invoiceId }).first();
    expect(entry).toMatchObject({ sourceType: 'invoice', reversesEntryId: null, date: '2026-11-12' });

    const res = await client(server.url, { token: team.manager.token }).post(`/api/invoices/${paid.invoiceId}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body.invoice.status).toBe('storniert');

    const entries = await db()('journalEntries').where({ tenantId: team.tenant.id }).orderBy('createdAt');
    expect(entries).toHaveLength(2);
    const reversal = entries.find((e) => e.id !== entry.id)!;
    expect(reversal).toMatchObject({ sourceType: CANCELLATION_SOURCE, sourceId: paid.invoiceId, reversesEntryId: entry.id, date: '2026-11-12' });
    const lines = await db()('journalLines as l')
      .join('ledgerAccounts as a', 'a.id', 'l.accountId')
      .where({ 'l.tenantId': team.tenant.id })
      .select('l.entryId', 'a.number', 'l.debit', 'l.credit');
    expect(
      lines
        .filter((l) => l.entryId === entry.id)
        .map((l) => [l.number, l.debit, l.credit])
        .sort(),
    ).toEqual([
      ['2891', '0.00', '10.00'],
      ['7890', '10.00', '0.00'],
    ]);
    expect(
      lines
        .filter((l) => l.entryId === reversal.id)
        .map((l) => [l.number, l.debit, l.credit])
        .sort(),
    ).toEqual([
      ['2891', '10.00', '0.00'],
      ['7890', '0.00', '10.00'],
    ]);
    const sum = (k: 'debit' | 'credit') => lines.reduce((s, l) => s.plus(l[k]), new Decimal(0)).toFixed(2);
    expect(sum('debit')).toBe(sum('credit'));
    const audit = await db()('auditLog').where({ tenantId: team.tenant.id, action: 'invoice.cancelled', entityId: paid.invoiceId }).first();
    expect(audit.data).toMatchObject({ from: 'bezahlt', reversalEntryId: reversal.id });

    // The void invoice, its payment and its ledger entries are out of DATEV for the month.
    const datev = await client(server.url, { token: team.viewer.token }).get('/api/reports/datev?year=2026&month=11');
    expect(datev.status).toBe(200);
    expect(bookingKeys(datev.raw)).toEqual([]);

    // A refund of the cancelled payment arriving later is booked as a document, but not posted:
    // the payment's entry is reversed in full already, a second reversal would take the expense below zero.
    const refund = await bookEvent(
      team.tenant.id,
      stripePayment({
        kind: 'refund',
        eventType: 'charge.refunded',
        externalId: `re_${randomUUID().slice(0, 8)}`,
        originalExternalId: payment.externalId,
        amount: '4.00',
      }),
      { autoPost: true, defaultSupplierId: supplier.id },
    );
    expect(refund.invoiceId).toEqual(expect.any(String));
    expect(refund.warning).toMatch(/was cancelled/);
    expect(await db()('journalEntries').where({ tenantId: team.tenant.id })).toHaveLength(2);
  });
});
