import { db } from '../../../shared/db';
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

/**
 * Fixture books for the report tests, built through the invoice commands (numbers, totals,
 * snapshots and credit notes are real). sendInvoice and cancelInvoice date documents "today";
 * the books are about March 2026, so after each command the document's issueDate is moved to the
 * day it is meant to have been issued (as if the command had run on that day).
 */
type Item = { description: string; quantity: string; unitPrice: string; taxRate: string };
const item = (quantity: string, unitPrice: string, taxRate: string, description = `Leistung ${taxRate} %`): Item => ({
  description,
  quantity,
  unitPrice,
  taxRate,
});

async function backdate(id: string, date: string) {
  await db()('invoices').where({ id }).update({ issueDate: date, dueDate: date });
}

async function sale(tenant: { id: string }, customerId: string, date: string, items: Item[], type: 'rechnung' | 'gutschrift' = 'rechnung') {
  const inv = await createSentInvoice(tenant, null, { type, customerId, items });
  await backdate(inv.id, date);
  return inv;
}

async function cancel(tenant: { id: string }, invoiceId: string, creditNoteDate: string) {
  const { creditNoteId } = await cancelInvoice(tenant, null, invoiceId);
  await backdate(creditNoteId!, creditNoteDate);
  return creditNoteId!;
}

async function incoming(tenant: { id: string }, supplierId: string, invoiceDate: string, items: Item[]) {
  return createIncomingInvoice(tenant, null, { supplierId, invoiceDate, items });
}

/**
 * Austrian book, March 2026 (hand-computed answers in reports.test.ts):
 *  R1 2026-03-01 domestic: 10 × 100.00 @20, 3 × 33.33 @10, 1 × 250.00 @13; paid 500.00 on 03-20
 *  R2 2026-03-31 EU business (DE VAT ID): 1 × 1500.00 @0 (reverse charge); paid in full 03-31
 *  R3 2026-02-28 domestic: 1 × 999.00 @20 (February: only in Q1)
 *  R4 2026-04-01 domestic: 1 × 777.00 @20 (April: in neither)
 *  R5 2026-03-15: 2 × 200.00 @20, cancelled; its credit note dated 2026-03-20
 *  R6 2026-03-25: 1 × 300.00 @10, cancelled; its credit note dated 2026-04-02 (April)
 *  G1 2026-03-10 credit note: 1 × 100.00 @20
 *  D  draft rechnung 2026-03-05: 1 × 5000.00 @20 (never counts)
 *  R7 2026-07-15: 1 × 100.00 @20 (a period on the 07_2026 XSD)
 *  E1 2026-03-05 supplier with expense account 7600: 1 × 500.00 @20; paid 600.00 on 03-25
 *  E2 2026-03-31 supplier without account: 1 × 200.00 @10, 1 × 100.00 @13
 *  E3 2026-04-01: 1 × 1000.00 @20 (April)
 *  E4 2026-03-10: 1 × 400.00 @20, cancelled (storniert: no input tax)
 *  Prior year: P1 2025-03-10 domestic 1 × 800.00 @20; PE 2025-03-12 supplier 7600 1 × 100.00 @20
 */
export async function austrianBook() {
  const team = await createTeam({ country: 'AT', taxNumber: '12-345/6789', address: 'Hauptstraße 1\n1010 Wien' });
  const t = team.tenant;
  const dom = await createCustomer(t, { name: 'Inland Kunde', company: 'Inland GmbH' });
  const eu = await createCustomer(t, { name: 'EU Kunde', company: 'Deutsche Kunde GmbH', vatId: 'DE123456789' });
  const r1 = await sale(t, dom.id, '2026-03-01', [item('10', '100.00', '20'), item('3', '33.33', '10'), item('1', '250.00', '13')]);
  const r2 = await sale(t, eu.id, '2026-03-31', [item('1', '1500.00', '0', 'Beratung (Reverse Charge)')]);
  await sale(t, dom.id, '2026-02-28', [item('1', '999.00', '20')]);
  await sale(t, dom.id, '2026-04-01', [item('1', '777.00', '20')]);
  const r5 = await sale(t, dom.id, '2026-03-15', [item('2', '200.00', '20')]);
  await cancel(t, r5.id, '2026-03-20');
  const r6 = await sale(t, dom.id, '2026-03-25', [item('1', '300.00', '10')]);
  await cancel(t, r6.id, '2026-04-02');
  await sale(t, dom.id, '2026-03-10', [item('1', '100.00', '20')], 'gutschrift');
  const draft = await createDraftInvoice(t, null, { customerId: dom.id, items: [item('1', '5000.00', '20')] });
  await backdate(draft.id, '2026-03-05');
  await sale(t, dom.id, '2026-07-15', [item('1', '100.00', '20')]);
  await recordPayment(t, null, r1.id, { amount: '500.00', date: '2026-03-20' });
  await recordPayment(t, null, r2.id, { amount: '1500.00', date: '2026-03-31' });

  const s1 = await createSupplier(t, { name: 'Büro & Co' });
  await db()('suppliers').where({ id: s1.id }).update({ defaultExpenseAccount: '7600' });
  const s2 = await createSupplier(t, { name: 'Diverses KG' });
  const e1 = await incoming(t, s1.id, '2026-03-05', [item('1', '500.00', '20')]);
  await incoming(t, s2.id, '2026-03-31', [item('1', '200.00', '10'), item('1', '100.00', '13')]);
  await incoming(t, s2.id, '2026-04-01', [item('1', '1000.00', '20')]);
  const e4 = await incoming(t, s2.id, '2026-03-10', [item('1', '400.00', '20')]);
  await cancelInvoice(t, null, e4.id);
  await recordPayment(t, null, e1.id, { amount: '600.00', date: '2026-03-25' });

  await sale(t, dom.id, '2025-03-10', [item('1', '800.00', '20')]);
  await incoming(t, s1.id, '2025-03-12', [item('1', '100.00', '20')]);
  return team;
}

/**
 * German book, March 2026:
 *  D1 2026-03-02 domestic: 1 × 1000.50 @19, 2 × 50.25 @7
 *  D2 2026-03-31 EU business (AT VAT ID): 1 × 800.00 @0 (reverse charge)
 *  DG 2026-03-12 credit note: 1 × 10.00 @19
 *  DE1 2026-03-03 incoming: 1 × 300.00 @19
 */
export async function germanBook() {
  const team = await createTeam({ country: 'DE', vatId: 'DE123456789', taxNumber: '9198011310010', address: 'Musterstraße 1\n10115 Berlin' });
  const t = team.tenant;
  const dom = await createCustomer(t, { name: 'Inland Kunde' });
  const eu = await createCustomer(t, { name: 'AT Kunde', company: 'Wiener Kunde GmbH', vatId: 'ATU12345678' });
  await sale(t, dom.id, '2026-03-02', [item('1', '1000.50', '19'), item('2', '50.25', '7')]);
  await sale(t, eu.id, '2026-03-31', [item('1', '800.00', '0')]);
  await sale(t, dom.id, '2026-03-12', [item('1', '10.00', '19')], 'gutschrift');
  const s = await createSupplier(t, { name: 'Lieferant GmbH' });
  await incoming(t, s.id, '2026-03-03', [item('1', '300.00', '19')]);
  return team;
}

/** An Austrian tenant with one invoice in March 2026: 1 × 1000.00 @ 20 % (KZ 000 = KZ 022 = 1000.00). */
export async function smallAustrianBook() {
  const team = await createTeam({ country: 'AT', taxNumber: '12-345/6789' });
  const c = await createCustomer(team.tenant, { name: 'Kunde' });
  await sale(team.tenant, c.id, '2026-03-10', [item('1', '1000.00', '20')]);
  return team;
}
