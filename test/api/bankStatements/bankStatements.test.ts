/**
 * Bank statements end to end (docs/bank-statements.md): camt.053 and MT940 uploaded through the
 * API, read by a real worker, each entry stored once, matched to seeded invoices with payments and
 * ledger postings; the same and an overlapping statement again change nothing; manual match,
 * ignore and unmatch; hostile files.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { useWorkers } from '../../helpers/workers';
import { creditorReferenceFor } from '../../../shared/domain/creditorReference';
import { dec, fmtMoney } from '../../../shared/domain/money';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createIncomingInvoice, createSentInvoice, createSupplier } from '../../helpers/invoiceFactory';
import { useTestServer } from '../../helpers/server';
import { waitUntil } from '../../helpers/waitUntil';
import { camt053, mt940, type TestEntry } from '../../helpers/bankFiles';
import type { InvoiceView } from '../../../shared/domain/invoiceView';

const env = useTestServer();
useWorkers(['documents', 'maintenance']);

type Team = Awaited<ReturnType<typeof createTeam>>;
const IBAN = 'AT611904300234573201'; // createTenant's default IBAN

const upload = (team: Team, body: string | Buffer, contentType = 'application/xml') =>
  env.http.request('POST', '/api/bank-statements', { token: team.member.token, rawBody: body, headers: { 'content-type': contentType } });

async function settled(team: Team, id: string) {
  return waitUntil(
    async () => {
      const res = await env.http.get(`/api/bank-statements/${id}`, { token: team.viewer.token });
      return ['imported', 'rejected'].includes(res.body.status) ? res.body : null;
    },
    `the import of ${id}`,
    60_000,
  );
}

async function importFile(team: Team, body: string | Buffer, contentType = 'application/xml') {
  const res = await upload(team, body, contentType);
  expect(res.status).toBe(202);
  expect(res.body.status).toBe('queued');
  return settled(team, res.body.id);
}

async function ledger(tenantId: string) {
  return db()('journalEntries as e')
    .join('journalLines as l', 'l.entryId', 'e.id')
    .join('ledgerAccounts as a', 'a.id', 'l.accountId')
    .where({ 'e.tenantId': tenantId })
    .whereIn('e.sourceType', ['bank_payment', 'bank_payment_reversal'])
    .select('e.sourceType', 'e.sourceId', 'a.number', 'l.debit', 'l.credit');
}

const invoice = (team: Team, id: string) => env.http.get(`/api/invoices/${id}`, { token: team.viewer.token }).then((r) => r.body as InvoiceView);
const transactions = async (team: Team, query = '') =>
  (await env.http.get(`/api/bank-transactions?limit=100${query}`, { token: team.viewer.token })).body.data as Record<string, any>[];
const money = (v: string) => fmtMoney(dec(v));

describe('a camt.053 with 50 entries against seeded invoices', () => {
  let team: Team;
  const sales: InvoiceView[] = [];
  const incoming: InvoiceView[] = [];
  const supplierIbans = ['DE89370400440532013000', 'AT483200000012345864'];
  const entries: TestEntry[] = [];
  const expected = new Map<string, { invoiceId: string; amount: string; rule: string; status: string }>();
  let statementId: string;

  beforeAll(async () => {
    team = await createTeam({ country: 'AT' });
    const tenant = { id: team.tenant.id };
    // 20 sales invoices with different totals, customers named so the payer can be recognised.
    for (let i = 0; i < 20; i++) {
      const customer = await createCustomer(tenant, { name: `Kundin ${i}`, company: `Firma ${String.fromCharCode(65 + i)} GmbH` });
      sales.push(
        await createSentInvoice(tenant, team.admin, {
          customerId: customer.id,
          items: [{ description: 'Leistung', quantity: '1', unitPrice: `${100 + i * 10}.00`, taxRate: '20' }],
        }),
      );
    }
    // Two further invoices of one customer with the same amount: the payer alone cannot tell them apart.
    const twin = await createCustomer(tenant, { name: 'Zwilling', company: 'Zwilling OG' });
    for (let i = 0; i < 2; i++) {
      sales.push(
        await createSentInvoice(tenant, team.admin, { customerId: twin.id, items: [{ description: 'Abo', quantity: '1', unitPrice: '50.00', taxRate: '20' }] }),
      );
    }
    for (let i = 0; i < 4; i++) {
      const supplier = await createSupplier(tenant, {
        name: `Lieferant ${i}`,
        iban: supplierIbans[i % 2] === supplierIbans[0] && i > 1 ? null : supplierIbans[i % 2],
      });
      incoming.push(
        await createIncomingInvoice(tenant, team.admin, {
          supplierId: supplier.id,
          invoiceNumber: `LF-${4711 + i}`,
          items: [{ description: 'Ware', quantity: '1', unitPrice: `${300 + i * 25}.00`, taxRate: '20' }],
        }),
      );
    }

    let n = 0;
    const day = (k: number) => `2026-11-${String(1 + (k % 25)).padStart(2, '0')}`;
    const add = (
      e: Omit<TestEntry, 'bookingDate' | 'ref'> & { ref?: string | null },
      match?: { invoice: InvoiceView; amount: string; rule: string; status: string },
    ) => {
      n++;
      const ref = e.ref === undefined ? `2026110${String(n).padStart(4, '0')}` : e.ref;
      entries.push({ ...e, ref, bookingDate: day(n) });
      if (match) expected.set(`${ref ?? e.ustrd?.[0]}`, { invoiceId: match.invoice.id, amount: match.amount, rule: match.rule, status: match.status });
    };
    // 0–7: the invoice number in the remittance, paid in full.
    for (let i = 0; i < 8; i++) {
      const s = sales[i];
      add(
        { amount: s.totalGross, direction: 'credit', name: `Firma ${String.fromCharCode(65 + i)} GmbH`, ustrd: [`Rechnung ${s.number} danke`] },
        {
          invoice: s,
          amount: money(s.totalGross),
          rule: 'number',
          status: 'bezahlt',
        },
      );
    }
    // 8–11: the RF reference derived from the number, structured (Strd/CdtrRefInf/Ref).
    for (let i = 8; i < 12; i++) {
      const s = sales[i];
      add(
        { amount: s.totalGross, direction: 'credit', name: 'Irgendwer', creditorRef: creditorReferenceFor(s.number!)! },
        {
          invoice: s,
          amount: money(s.totalGross),
          rule: 'reference',
          status: 'bezahlt',
        },
      );
    }
    // 12–14: partial payments by number.
    for (let i = 12; i < 15; i++) {
      const s = sales[i];
      const half = fmtMoney(dec(s.totalGross).div(2).toDecimalPlaces(2));
      add({ amount: half, direction: 'credit', ustrd: [`Teilzahlung ${s.number}`] }, { invoice: s, amount: half, rule: 'number', status: 'teilbezahlt' });
    }
    // 15: 10.00 more than due: paid in full, the rest stays unapplied on the entry.
    add(
      { amount: fmtMoney(dec(sales[15].totalGross).plus(10)), direction: 'credit', ustrd: [`${sales[15].number}`] },
      {
        invoice: sales[15],
        amount: money(sales[15].totalGross),
        rule: 'number',
        status: 'bezahlt',
      },
    );
    // 16–18: no reference, exact amount from the customer by name.
    for (let i = 16; i < 19; i++) {
      const s = sales[i];
      add(
        { amount: s.totalGross, direction: 'credit', name: `FIRMA ${String.fromCharCode(65 + i)} GMBH`, ustrd: ['Danke fuer die gute Zusammenarbeit'] },
        {
          invoice: s,
          amount: money(s.totalGross),
          rule: 'amountAndPayer',
          status: 'bezahlt',
        },
      );
    }
    // 19: the twin customer's amount fits two invoices: left unmatched.
    add({ amount: sales[20].totalGross, direction: 'credit', name: 'Zwilling OG', ustrd: ['Abo November'] });
    // 20–21: debits to suppliers by IBAN and amount; 22: by the supplier's number.
    for (let i = 0; i < 2; i++) {
      add(
        { amount: incoming[i].totalGross, direction: 'debit', name: 'Empfaenger', iban: supplierIbans[i], ustrd: ['Zahlung'] },
        {
          invoice: incoming[i],
          amount: money(incoming[i].totalGross),
          rule: 'amountAndPayer',
          status: 'bezahlt',
        },
      );
    }
    add(
      { amount: incoming[2].totalGross, direction: 'debit', name: 'Lieferant 2', ustrd: ['Ihre Rechnung LF-4713'] },
      {
        invoice: incoming[2],
        amount: money(incoming[2].totalGross),
        rule: 'number',
        status: 'bezahlt',
      },
    );
    // 23: a number in another currency: stored, flagged, not matched.
    add({ amount: '120.00', currency: 'USD', direction: 'credit', ustrd: [`${sales[19].number}`] });
    // 24: a reversal naming an invoice: not matched.
    add({ amount: sales[19].totalGross, direction: 'credit', reversal: true, ustrd: [`${sales[19].number}`] });
    // 25–26: two equal entries without a bank reference (dedup by content and ordinal).
    add({ ref: null, amount: '7.50', direction: 'debit', ustrd: ['Kontofuehrung'] });
    add({ ref: null, amount: '7.50', direction: 'debit', ustrd: ['Kontofuehrung'] });
    // The rest: salaries, rent, unknown credits.
    while (entries.length < 50)
      add({ amount: `${1000 + entries.length}.00`, direction: entries.length % 2 ? 'debit' : 'credit', name: 'Sonstige', ustrd: ['Gehalt'] });
    // A pending entry is not booked: left out.
    entries.push({ ref: 'PENDING-1', amount: '99.00', direction: 'credit', bookingDate: '2026-11-26', status: 'PDNG', ustrd: [`${sales[19].number}`] });

    const row = await importFile(team, camt053({ version: '08', iban: IBAN, entries }));
    statementId = row.id;
  });

  it('stores 50 entries and matches 22 of them', async () => {
    const row = await settled(team, statementId);
    expect(row).toMatchObject({
      status: 'imported',
      format: 'camt.053.001.08',
      accountIban: IBAN,
      flags: [],
      counts: { entries: 50, new: 50, duplicates: 0, matched: 22, unmatched: 28, ignored: 0 },
    });
    expect(row.warnings).toEqual([expect.stringMatching(/status PDNG, not booked/)]);
  });

  it('records the expected payments, invoice states and postings on the bank account', async () => {
    const txs = await transactions(team, `&statementId=${statementId}`);
    expect(txs).toHaveLength(50);
    const matched = txs.filter((t) => t.status === 'matched');
    expect(matched).toHaveLength(expected.size);
    for (const t of matched) {
      const want = expected.get(t.entryReference ?? t.remittance)!;
      expect(want, `entry ${t.entryReference}`).toBeDefined();
      expect(t).toMatchObject({ invoiceId: want.invoiceId, matchedAmount: want.amount, matchRule: want.rule });
      const inv = await invoice(team, want.invoiceId);
      expect(inv.status).toBe(want.status);
      expect(inv.payments.map((p) => [p.amount, p.method, p.date])).toEqual([[want.amount, 'bank_transfer', t.bookingDate]]);
    }
    const over = txs.find((t) => t.invoiceId === sales[15].id)!;
    expect(over).toMatchObject({ flags: ['overpaid'], note: '10.00 EUR beyond the amount due stays unapplied' });
    expect(txs.find((t) => t.currency === 'USD')).toMatchObject({ status: 'unmatched', flags: ['foreignCurrency'] });
    expect(txs.find((t) => t.reversal)).toMatchObject({ status: 'unmatched', flags: ['reversal'] });
    expect(txs.find((t) => t.counterpartyName === 'Zwilling OG')).toMatchObject({
      status: 'unmatched',
      note: 'several open invoices of this party have this amount due',
    });
    expect(txs.filter((t) => t.amount === '7.50')).toHaveLength(2);
    expect((await invoice(team, sales[19].id)).status).toBe('offen');

    // Ledger (EKR): credits debit 2800 Bank / credit 2000 Lieferforderungen, debits 3300 / 2800.
    const lines = await ledger(team.tenant.id);
    expect(new Set(lines.map((l) => l.sourceId)).size).toBe(22);
    for (const t of matched) {
      const own = lines.filter((l) => l.sourceId === t.paymentId).map((l) => [l.number, l.debit, l.credit]);
      expect(own).toEqual(
        expect.arrayContaining(
          t.direction === 'credit'
            ? [
                ['2800', t.matchedAmount, '0.00'],
                ['2000', '0.00', t.matchedAmount],
              ]
            : [
                ['3300', t.matchedAmount, '0.00'],
                ['2800', '0.00', t.matchedAmount],
              ],
        ),
      );
    }
  });

  it('the same file again and an overlapping camt.053.001.02 change nothing that is there', async () => {
    const payments = async () => (await db()('payments').where({ tenantId: team.tenant.id }).count({ n: '*' }))[0].n;
    const before = { payments: await payments(), lines: (await ledger(team.tenant.id)).length };

    const again = await importFile(team, camt053({ version: '08', iban: IBAN, entries }));
    expect(again.counts).toMatchObject({ entries: 50, new: 0, duplicates: 50, matched: 0 });

    // The last 10 entries of the first statement and 2 new ones, in the older namespace.
    const overlap = [
      ...entries.slice(40, 50),
      { ref: 'NEW-1', amount: sales[19].totalGross, direction: 'credit' as const, bookingDate: '2026-11-26', ustrd: [`Re ${sales[19].number}`] },
      { ref: 'NEW-2', amount: '3.20', direction: 'debit' as const, bookingDate: '2026-11-26', ustrd: ['Spesen'] },
    ];
    const second = await importFile(team, camt053({ version: '02', iban: IBAN, statementId: 'STMT-2', entries: overlap }));
    expect(second).toMatchObject({ format: 'camt.053.001.02', counts: { entries: 12, new: 2, duplicates: 10, matched: 1, unmatched: 1 } });
    expect((await invoice(team, sales[19].id)).status).toBe('bezahlt');
    expect({ payments: await payments(), lines: (await ledger(team.tenant.id)).length }).toEqual({
      payments: Number(before.payments) + 1,
      lines: before.lines + 2,
    });
    expect(await db()('bankTransactions').where({ tenantId: team.tenant.id }).count({ n: '*' })).toEqual([{ n: 52 }]);
  });

  it('manual match, ignore and unmatch; refusals never pay twice or too much', async () => {
    const open = (await transactions(team, '&status=unmatched')).find((t) => t.counterpartyName === 'Zwilling OG')!;
    const [a, b] = [sales[20], sales[21]];
    const member = env.http.as(team.member.token);

    // More than due, more than the entry, a debit for a sales invoice, a viewer: refused.
    expect((await member.post(`/api/bank-transactions/${open.id}/match`, { invoiceId: a.id, amount: '1000.00' })).status).toBe(422);
    const debit = (await transactions(team, '&status=unmatched')).find((t) => t.direction === 'debit')!;
    const wrong = await member.post(`/api/bank-transactions/${debit.id}/match`, { invoiceId: a.id });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.message).toMatch(/A debit pays an incoming invoice/);
    expect((await env.http.post(`/api/bank-transactions/${open.id}/match`, { invoiceId: a.id }, { token: team.viewer.token })).status).toBe(403);

    const partial = await member.post(`/api/bank-transactions/${open.id}/match`, { invoiceId: a.id, amount: '20.00' });
    expect(partial.status).toBe(200);
    expect(partial.body).toMatchObject({ status: 'matched', invoiceId: a.id, matchedAmount: '20.00', matchRule: 'manual' });
    expect((await invoice(team, a.id)).status).toBe('teilbezahlt');
    // Used once only: a second match of the same entry is refused.
    expect((await member.post(`/api/bank-transactions/${open.id}/match`, { invoiceId: b.id })).status).toBe(422);
    expect((await member.post(`/api/bank-transactions/${open.id}/ignore`)).status).toBe(422);

    const paymentId = partial.body.paymentId;
    const undone = await member.post(`/api/bank-transactions/${open.id}/unmatch`);
    expect(undone.status).toBe(200);
    expect(undone.body).toMatchObject({ status: 'unmatched', invoiceId: null, paymentId: null });
    const inv = await invoice(team, a.id);
    expect(inv).toMatchObject({ status: 'offen', amountPaid: '0.00', payments: [] });
    const reversal = (await ledger(team.tenant.id)).filter((l) => l.sourceId === paymentId);
    expect(reversal.map((l) => [l.sourceType, l.number, l.debit, l.credit]).sort()).toEqual(
      [
        ['bank_payment', '2000', '0.00', '20.00'],
        ['bank_payment', '2800', '20.00', '0.00'],
        ['bank_payment_reversal', '2000', '20.00', '0.00'],
        ['bank_payment_reversal', '2800', '0.00', '20.00'],
      ].sort(),
    );

    const full = await member.post(`/api/bank-transactions/${open.id}/match`, { invoiceId: b.id });
    expect(full.body).toMatchObject({ status: 'matched', matchedAmount: money(b.totalGross) });
    expect((await invoice(team, b.id)).status).toBe('bezahlt');

    const fee = (await transactions(team, '&status=unmatched')).find((t) => t.amount === '3.20')!;
    expect((await member.post(`/api/bank-transactions/${fee.id}/ignore`)).body.status).toBe('ignored');
    expect((await transactions(team, '&status=ignored')).map((t) => t.id)).toEqual([fee.id]);
    expect((await member.post(`/api/bank-transactions/${fee.id}/unmatch`)).body.status).toBe('unmatched');

    const nov = await transactions(team, '&from=2026-11-26&to=2026-11-26');
    expect(nov.every((t) => t.bookingDate === '2026-11-26')).toBe(true);
    // Another tenant sees none of it.
    const other = await createTeam();
    expect((await env.http.get(`/api/bank-transactions/${fee.id}`, { token: other.viewer.token })).status).toBe(404);
    expect((await env.http.post(`/api/bank-transactions/${fee.id}/ignore`, undefined, { token: other.member.token })).status).toBe(404);
    expect((await env.http.get(`/api/bank-statements/${statementId}`, { token: other.viewer.token })).status).toBe(404);
  });
});

describe('MT940', () => {
  it('a German MT940 with structured :86: matches by number and by supplier IBAN', async () => {
    const team = await createTeam({ country: 'DE', vatId: 'DE811907980', iban: 'DE89370400440532013000' });
    const tenant = { id: team.tenant.id };
    const s = await createSentInvoice(tenant, team.admin, { items: [{ description: 'X', quantity: '1', unitPrice: '100.00', taxRate: '19' }] });
    const supplier = await createSupplier(tenant, { name: 'Stadtwerke', iban: 'DE02120300000000202051' });
    const inc = await createIncomingInvoice(tenant, team.admin, {
      supplierId: supplier.id,
      items: [{ description: 'Strom', quantity: '1', unitPrice: '80.00', taxRate: '19' }],
    });
    const file = mt940({
      account: '37040044/532013000',
      entries: [
        {
          ref: 'B1',
          amount: s.totalGross,
          direction: 'credit',
          bookingDate: '2026-11-20',
          name: 'Kunde mit langem Namen und Zusatz GmbH',
          iban: 'DE75512108001245126199',
          ustrd: [`Rechnung Nr. ${s.number} vom 20.11.`],
          endToEnd: 'E2E1',
        },
        {
          ref: 'B2',
          amount: inc.totalGross,
          direction: 'debit',
          bookingDate: '2026-11-21',
          name: 'Stadtwerke',
          iban: 'DE02120300000000202051',
          ustrd: ['Abschlag'],
        },
        { amount: '4.90', direction: 'debit', bookingDate: '2026-11-22', free: 'ABSCHLUSS PER 30.11.2026 KONTOFUEHRUNG' },
      ],
    });
    const row = await importFile(team, file, 'text/plain');
    expect(row).toMatchObject({
      status: 'imported',
      format: 'mt940',
      accountIban: 'DE89370400440532013000',
      counts: { entries: 3, new: 3, matched: 2, unmatched: 1 },
    });
    expect((await invoice(team, s.id)).status).toBe('bezahlt');
    expect((await invoice(team, inc.id)).status).toBe('bezahlt');
    // SKR03: 1200 Bank against 1400 receivables and 1600 payables.
    const accounts = (await ledger(team.tenant.id)).map((l) => l.number).sort();
    expect(accounts).toEqual(['1200', '1200', '1400', '1600']);
    const again = await importFile(team, file, 'text/plain');
    expect(again.counts).toMatchObject({ new: 0, duplicates: 3 });
  });
});

describe('bad input', () => {
  let team: Team;
  beforeAll(async () => {
    team = await createTeam();
  });

  it('refuses what is no statement at the door (415), too large (413), empty (400)', async () => {
    const pdf = await upload(team, '%PDF-1.7 whatever', 'application/octet-stream');
    expect(pdf.status).toBe(415);
    expect(pdf.body.error.message).toMatch(/neither a camt\.053 XML statement nor an MT940/);
    expect((await upload(team, '{}', 'application/json')).status).toBe(415);
    expect((await upload(team, Buffer.alloc(20 * 1024 * 1024 + 1, 0x20), 'text/plain')).status).toBe(413);
    expect((await upload(team, '', 'text/plain')).status).toBe(400);
    expect(
      (await env.http.request('POST', '/api/bank-statements', { token: team.viewer.token, rawBody: '<x/>', headers: { 'content-type': 'application/xml' } }))
        .status,
    ).toBe(403);
  });

  it('takes the file as a multipart form field too', async () => {
    const form = new FormData();
    form.append(
      'file',
      new Blob([camt053({ version: '04', iban: IBAN, entries: [{ ref: 'M1', amount: '1.00', direction: 'credit', bookingDate: '2026-11-02' }] })]),
      'stmt.xml',
    );
    const res = await fetch(`${env.server.url}/api/bank-statements`, { method: 'POST', headers: { authorization: `Bearer ${team.member.token}` }, body: form });
    expect(res.status).toBe(202);
    const row = await settled(team, ((await res.json()) as { id: string }).id);
    expect(row).toMatchObject({ status: 'imported', format: 'camt.053.001.04', counts: { entries: 1, new: 1 } });
  });

  it('rejects XXE, entity expansion and malformed statements with the cause, never a 500', async () => {
    const xxe = `<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">&x;</Document>`;
    expect(await importFile(team, xxe)).toMatchObject({ status: 'rejected', error: expect.stringMatching(/XXE \/ entity expansion/) });
    const laughs = `<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><Document>&b;</Document>`;
    expect(await importFile(team, laughs)).toMatchObject({ status: 'rejected', error: expect.stringMatching(/entity expansion/) });
    const amount = camt053({ version: '08', iban: IBAN, entries: [{ ref: 'Q', amount: '12.345', direction: 'credit', bookingDate: '2026-11-02' }] });
    expect(await importFile(team, amount)).toMatchObject({ status: 'rejected', error: expect.stringMatching(/more than 2 decimals/) });
    expect(await importFile(team, ':20:X\r\n:25:AT611904300234573201\r\n:61:garbage\r\n', 'text/plain')).toMatchObject({
      status: 'rejected',
      error: expect.stringMatching(/:61: line is not in the MT940 format/),
    });
    expect(
      await db()('bankTransactions')
        .where({ tenantId: team.tenant.id })
        .whereNot({ dedupKey: `ref|${IBAN}|M1` }),
    ).toHaveLength(0);
  });

  it('imports a statement of an account the tenant has not configured, flagged and not matched', async () => {
    const other = await createTeam();
    const s = await createSentInvoice({ id: other.tenant.id }, other.admin);
    const row = await importFile(
      other,
      camt053({
        version: '08',
        iban: 'DE89370400440532013000',
        entries: [{ ref: 'U1', amount: s.totalGross, direction: 'credit', bookingDate: '2026-11-02', ustrd: [s.number!] }],
      }),
    );
    expect(row).toMatchObject({ status: 'imported', flags: ['unknownAccount'], counts: { new: 1, matched: 0, unmatched: 1 } });
    expect(row.warnings).toEqual([expect.stringMatching(/not the tenant's configured IBAN/)]);
    expect((await invoice(other, s.id)).status).toBe('offen');
  });
});
