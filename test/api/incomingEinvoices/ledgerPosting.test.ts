/**
 * Imported e-invoices posted to the ledger (docs/ledger.md, "Imported e-invoices"), through the API
 * and a real worker: with `einvoiceImport.autoPost` the import posts expense, input tax per rate and
 * accounts payable in one entry; off, nothing; foreign VAT stays in the expense; a credit note
 * reverses its invoice's accounts; a retried import posts once.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Job } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { storeExchangeRates } from '../../../shared/commands/exchangeRates';
import { dec, fmtMoney } from '../../../shared/domain/money';
import type { ImportIncomingEinvoicePayload } from '../../../shared/jobs/catalog';
import { importIncomingEinvoiceJob } from '../../../workers/jobs/einvoices/importIncomingEinvoice';
import { useWorkers } from '../../helpers/workers';
import { createTeam, createTenant, createUser } from '../../helpers/factories';
import { needsOfficialFiles, officialPath } from '../../helpers/officialFiles';
import { useTestServer } from '../../helpers/server';
import { uploadAndSettle, ublDocument, type UblDoc } from '../../helpers/incomingEinvoices';

const MANIFEST = 'samples:einvoices/manifest.json' as const;
const official = needsOfficialFiles([MANIFEST]);
const sampleBytes = (file: string) => readFileSync(path.join(path.dirname(officialPath(MANIFEST)), file));

/** A one-rate EN 16931 UBL document whose totals add up. */
const ubl = ({ net, rate, ...d }: Omit<UblDoc, 'lines'> & { net: string; rate: string }) => ublDocument({ ...d, lines: [{ net, rate }] });

const env = useTestServer();
useWorkers(['documents', 'maintenance']);

type Team = Awaited<ReturnType<typeof createTeam>>;
const teams: Team[] = [];
async function deTeam(einvoiceImport?: { autoPost: boolean; expenseAccount?: string }) {
  const team = await createTeam({ country: 'DE', vatId: 'DE811907980' });
  teams.push(team);
  if (einvoiceImport) {
    const res = await env.http.put('/api/settings', { einvoiceImport }, { token: team.admin.token });
    expect(res.status).toBe(200);
    expect(res.body.einvoiceImport).toEqual({ autoPost: einvoiceImport.autoPost, expenseAccount: einvoiceImport.expenseAccount ?? null });
  }
  return team;
}

// Double entry holds per tenant after every test (as the webhook tests assert).
afterEach(async () => {
  for (const team of teams.splice(0)) {
    const [sums] = await db()('journalLines').where({ tenantId: team.tenant.id }).sum({ debit: 'debit', credit: 'credit' });
    expect(fmtMoney(sums.debit ?? 0)).toBe(fmtMoney(sums.credit ?? 0));
  }
});

async function importDoc(team: Team, bytes: Buffer) {
  return uploadAndSettle(env.http, team, bytes);
}

/** The entries posted for an invoice, each with its lines as `account: debit/credit`. */
async function entriesOf(tenantId: string, invoiceId: string) {
  const entries = await db()('journalEntries').where({ tenantId, sourceId: invoiceId }).orderBy('sourceType');
  return Promise.all(
    entries.map(async (e) => {
      const lines = await db()('journalLines as jl')
        .join('ledgerAccounts as a', 'a.id', 'jl.accountId')
        .where({ 'jl.entryId': e.id })
        .orderBy('a.number')
        .select('a.number', 'jl.debit', 'jl.credit');
      return {
        id: e.id as string,
        sourceType: e.sourceType as string,
        reversesEntryId: e.reversesEntryId as string | null,
        lines: Object.fromEntries(lines.map((l) => [l.number, `${fmtMoney(l.debit)}/${fmtMoney(l.credit)}`])) as Record<string, string>,
      };
    }),
  );
}

describe.skipIf(!official)('a KoSIT XRechnung UBL sample', () => {
  it('with auto-post on: one entry of expense, Vorsteuer 7 % and payables summing to the invoice; a retried import posts once', async () => {
    const team = await deTeam({ autoPost: true });
    // 01.01a: net 314.86 at 7 %, VAT 22.04, gross 336.90.
    const row = await importDoc(team, sampleBytes('xrechnung-testsuite/01.01a-INVOICE_ubl.xml'));
    expect(row.status).toBe('imported');
    expect(row.warnings.filter((w: string) => w.startsWith('auto-post'))).toEqual([]);
    const entries = await entriesOf(team.tenant.id, row.invoiceId);
    expect(entries).toEqual([
      { id: expect.any(String), sourceType: 'invoice', reversesEntryId: null, lines: { '1571': '22.04/0.00', '1600': '0.00/336.90', '4900': '314.86/0.00' } },
    ]);

    // The job again, and again after its row was left processing by a crash: no second entry.
    const run = () => importIncomingEinvoiceJob({ data: { tenantId: team.tenant.id, incomingId: row.id } } as Job<ImportIncomingEinvoicePayload>);
    expect(await run()).toMatchObject({ skipped: true });
    await db()('incomingEinvoices').where({ id: row.id }).update({ status: 'processing' });
    expect(await run()).toMatchObject({ status: 'duplicate' });
    expect(await db()('journalEntries').where({ tenantId: team.tenant.id })).toHaveLength(1);
  });

  it('with auto-post off (the default): booked, nothing posted', async () => {
    const team = await deTeam();
    const row = await importDoc(team, sampleBytes('xrechnung-testsuite/01.01a-INVOICE_ubl.xml'));
    expect(row.status).toBe('imported');
    expect(await db()('journalEntries').where({ tenantId: team.tenant.id })).toHaveLength(0);
    const settings = await env.http.get('/api/settings', { token: team.manager.token });
    expect(settings.body.einvoiceImport).toEqual({ autoPost: false, expenseAccount: null });
  });
});

describe.skipIf(!official)('every published sample with auto-post on', () => {
  it('settles as without it; an imported one has one balanced entry crediting payables its gross, or an auto-post warning', async () => {
    const manifest: { id: string; file: string; expected: string; currency: string }[] = JSON.parse(readFileSync(officialPath(MANIFEST), 'utf8'));
    const results = await Promise.all(
      manifest.map(async (e) => {
        const austrian = e.file.startsWith('ebinterface/');
        const tenant = await createTenant(austrian ? { country: 'AT', vatId: 'ATU13585627' } : { country: 'DE', vatId: 'DE811907980' });
        await db()('tenants')
          .where({ id: tenant.id })
          .update({ settings: db().raw(`settings || '{"einvoiceImport": {"autoPost": true, "expenseAccount": null}}'::jsonb`) });
        const member = await createUser(tenant, 'member');
        const contentType = e.file.endsWith('.pdf') ? 'application/pdf' : 'application/xml';
        const row = await uploadAndSettle(env.http, { member, viewer: member }, sampleBytes(e.file), contentType, `the import of ${e.file}`);
        return { e, tenantId: tenant.id, row };
      }),
    );
    let posted = 0;
    for (const { e, tenantId, row } of results) {
      if (row.status !== 'imported') continue;
      const entries = await entriesOf(tenantId, row.invoiceId);
      const warning = row.warnings.find((w: string) => w.startsWith('auto-post'));
      if (!entries.length) {
        // The samples in DKK, SEK, NOK, USD, HUF, GBP: no ECB rate stored for their days.
        expect(warning, e.file).toMatch(/^auto-post skipped: [A-Z]{3} differs from the ledger currency EUR and the invoice has no exchange rate/);
        continue;
      }
      posted++;
      const invoice = await db()('invoices').where({ id: row.invoiceId }).first('totalGross', 'currency');
      const main = entries.find((x) => x.sourceType === 'invoice')!;
      const payables = main.lines[e.file.startsWith('ebinterface/') ? '3300' : '1600'];
      const sides = payables.split('/').map((v) => dec(v));
      if (invoice.currency === 'EUR') expect(fmtMoney(sides[0].plus(sides[1])), e.file).toBe(fmtMoney(dec(invoice.totalGross).abs()));
      const sum = (i: 0 | 1) => Object.values(main.lines).reduce((a, l) => a.plus(dec(l.split('/')[i])), dec(0));
      expect(fmtMoney(sum(0)), e.file).toBe(fmtMoney(sum(1)));
    }
    // 50 imported: 40 posted (invoices and unlinked credit notes), the 10 in other currencies not.
    expect(posted).toBe(40);
  }, 240_000);
});

describe('auto-post of imported e-invoices', () => {
  it('19 % on the settings expense account; a foreign VAT invoice has no Vorsteuer line, its tax stays in the expense', async () => {
    const team = await deTeam({ autoPost: true, expenseAccount: '4930' });
    const dom = await importDoc(team, ubl({ number: 'R-1', net: '100.00', rate: '19' }));
    expect((await entriesOf(team.tenant.id, dom.invoiceId))[0].lines).toEqual({ '1576': '19.00/0.00', '1600': '0.00/119.00', '4930': '100.00/0.00' });

    const dk = await importDoc(team, ubl({ number: 'DK-1', seller: { name: 'Dansk A/S', vatId: 'DK13585628', country: 'DK' }, net: '100.00', rate: '25' }));
    expect(dk.status).toBe('imported');
    expect((await entriesOf(team.tenant.id, dk.invoiceId))[0].lines).toEqual({ '1600': '0.00/125.00', '4930': '125.00/0.00' });
  });

  it('the supplier’s default expense account beats the setting', async () => {
    const team = await deTeam({ autoPost: true, expenseAccount: '4930' });
    const first = await importDoc(team, ubl({ number: 'R-1', net: '10.00', rate: '19' }));
    const inv = await env.http.get(`/api/invoices/${first.invoiceId}`, { token: team.viewer.token });
    await db()('suppliers').where({ id: inv.body.supplierId }).update({ defaultExpenseAccount: '4950' });
    const second = await importDoc(team, ubl({ number: 'R-2', net: '10.00', rate: '19' }));
    expect((await entriesOf(team.tenant.id, second.invoiceId))[0].lines).toMatchObject({ '4950': '10.00/0.00' });
  });

  it('a credit note reverses its invoice’s accounts with its own amounts; cancelling the invoice reverses every line', async () => {
    const team = await deTeam({ autoPost: true });
    const inv = await importDoc(team, ubl({ number: 'R-100', net: '100.00', rate: '19' }));
    const [original] = await entriesOf(team.tenant.id, inv.invoiceId);
    const cn = await importDoc(team, ubl({ kind: 'CreditNote', number: 'G-1', preceding: 'R-100', net: '40.00', rate: '19' }));
    expect(cn.status).toBe('imported');
    expect(await entriesOf(team.tenant.id, cn.invoiceId)).toEqual([
      {
        id: expect.any(String),
        sourceType: 'invoice',
        reversesEntryId: original.id,
        lines: { '1576': '0.00/7.60', '1600': '47.60/0.00', '4900': '0.00/40.00' },
      },
    ]);

    const cancel = await env.http.post(`/api/invoices/${inv.invoiceId}/cancel`, {}, { token: team.manager.token });
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
    const storno = (await entriesOf(team.tenant.id, inv.invoiceId)).find((e) => e.sourceType === 'invoice_cancellation');
    expect(storno).toMatchObject({ reversesEntryId: original.id, lines: { '1576': '0.00/19.00', '1600': '119.00/0.00', '4900': '0.00/100.00' } });
  });

  it('another currency without a stored rate, and an account the chart lacks, leave the invoice booked and unposted with a warning', async () => {
    const team = await deTeam({ autoPost: true, expenseAccount: '4930' });
    const sek = await importDoc(team, ubl({ number: 'SEK-1', currency: 'SEK', net: '1000.00', rate: '19' }));
    expect(sek.status).toBe('imported');
    expect(sek.warnings).toContainEqual(
      expect.stringMatching(/^auto-post skipped: SEK differs from the ledger currency EUR and the invoice has no exchange rate/),
    );
    expect(await entriesOf(team.tenant.id, sek.invoiceId)).toEqual([]);

    // An account the accountant added, saved as the fallback, and removed from the chart since (a seeded one would be seeded again).
    await db()('ledgerAccounts').insert({ tenantId: team.tenant.id, number: '4999', name: 'Eigenes Aufwandskonto', kind: 'expense', chart: 'SKR03' });
    expect((await env.http.put('/api/settings', { einvoiceImport: { expenseAccount: '4999' } }, { token: team.admin.token })).body.einvoiceImport).toEqual({
      autoPost: true,
      expenseAccount: '4999',
    });
    await db()('ledgerAccounts').where({ tenantId: team.tenant.id, number: '4999' }).delete();
    const row = await importDoc(team, ubl({ number: 'R-1', net: '100.00', rate: '19' }));
    expect(row.status).toBe('imported');
    expect(row.warnings).toContainEqual("auto-post failed: Expense account 4999 does not exist in the tenant's chart of accounts");
    expect(await entriesOf(team.tenant.id, row.invoiceId)).toEqual([]);
  });

  it('another currency with a stored ECB rate: gross and tax converted on their own, the expense takes the difference', async () => {
    const team = await deTeam({ autoPost: true });
    // A day no other test file stores a rate for.
    const day = { currency: 'NOK', date: '2019-07-16', rate: '9.7' };
    await db().transaction((trx) => storeExchangeRates({ trx }, [day]));
    try {
      const row = await importDoc(team, ubl({ number: 'NOK-1', currency: 'NOK', date: day.date, net: '100.00', rate: '19' }));
      expect(row.status).toBe('imported');
      // 119.00 / 9.7 = 12.27; 19.00 / 9.7 = 1.96; 12.27 - 1.96 = 10.31.
      expect((await entriesOf(team.tenant.id, row.invoiceId))[0].lines).toEqual({ '1576': '1.96/0.00', '1600': '0.00/12.27', '4900': '10.31/0.00' });
    } finally {
      await db()('exchangeRates').where({ currency: day.currency, rateDate: day.date }).delete();
    }
  });

  it('an Austrian tenant (EKR): Vorsteuer 2500, Lieferverbindlichkeiten 3300', async () => {
    const team = await createTeam({ country: 'AT', vatId: 'ATU13585627' });
    teams.push(team);
    expect((await env.http.put('/api/settings', { einvoiceImport: { autoPost: true } }, { token: team.admin.token })).status).toBe(200);
    const row = await importDoc(
      team,
      ubl({ number: 'AT-1', seller: { name: 'Wiener Lieferant GmbH', vatId: 'ATU12345678', country: 'AT' }, net: '100.00', rate: '20' }),
    );
    expect(row.status).toBe('imported');
    expect((await entriesOf(team.tenant.id, row.invoiceId))[0].lines).toEqual({ '2500': '20.00/0.00', '3300': '0.00/120.00', '7890': '100.00/0.00' });
  });

  it('an expense account that is not one is refused when saved', async () => {
    const team = await deTeam();
    const res = await env.http.put('/api/settings', { einvoiceImport: { autoPost: true, expenseAccount: '1600' } }, { token: team.admin.token });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'einvoiceImport.expenseAccount', message: 'account 1600 is not an expense account' }]);
  });
});
