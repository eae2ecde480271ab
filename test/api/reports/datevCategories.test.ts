import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createIncomingInvoice, createSentInvoice, createSupplier } from '../../helpers/invoiceFactory';
import { datevBookings } from '../../helpers/datevCsv';
import { taxLine, type TaxLine } from '../../helpers/taxLines';

/**
 * The DATEV export books each stored VAT category on its own account and BU key
 * (docs/tax-reports.md, "Account mapping"): one row per invoice, rate and category, for SKR03,
 * SKR04 and EKR tenants, through GET /api/reports/datev. Purchases under reverse charge and
 * intra-Community acquisitions carry the key that books output and input tax at once.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const line = taxLine;

type Tenant = { id: string };

async function sale(t: Tenant, customerId: string, items: TaxLine[], date = '2026-03-10') {
  const inv = await createSentInvoice(t, undefined, { customerId, items });
  await db()('invoices').where({ id: inv.id }).update({ issueDate: date, dueDate: date });
  return inv;
}

/** An incoming invoice at 0 % whose lines carry a purchase category (stored as the reports read it). */
async function purchase(t: Tenant, net: string, category: 'reverseCharge' | 'intraCommunitySupply') {
  const supplier = await createSupplier(t, { name: `Lieferant ${category}` });
  const inv = await createIncomingInvoice(t, undefined, { supplierId: supplier.id, invoiceDate: '2026-03-12', items: [line(net, '0')] });
  await db()('invoiceItems').where({ invoiceId: inv.id }).update({ taxCategory: category });
  return inv;
}

/** Rows as "amount|S/H|Konto|Gegenkonto|BU", sorted (the export's order within one day is by invoice id). */
async function datevRows(token: string): Promise<string[]> {
  const res = await client(server.url, { token }).get('/api/reports/datev?year=2026&month=3');
  expect(res.status).toBe(200);
  return datevBookings(res.raw)
    .map((r) => [r[0], r[1], r[6], r[7], r[8]].join('|'))
    .sort();
}

/** A German book mixing every category; `chart` SKR03 (default for DE) or SKR04. */
async function germanBook(chart: 'SKR03' | 'SKR04') {
  const team = await createTeam({
    country: 'DE',
    vatId: 'DE123456789',
    taxNumber: '9198011310010',
    address: 'Musterstraße 1\n10115 Berlin',
    settings: JSON.stringify({ datev: { chart } }),
  });
  const t = team.tenant;
  const home = await createCustomer(t, { name: 'Inland', country: 'DE' });
  const fr = await createCustomer(t, { name: 'FR Kunde', company: 'Client SARL', country: 'FR', vatId: 'FR40303265045' });
  const ch = await createCustomer(t, { name: 'CH Kunde', company: 'Kunde AG', country: 'CH' });
  await sale(t, home.id, [line('100.00', '19'), line('200.00', '0', 'zeroRated')]);
  await sale(t, home.id, [line('300.00', '0', 'exempt', 'DE-4-14a'), line('400.00', '0', 'exempt', 'DE-4-12')]);
  await sale(t, fr.id, [line('500.00', '0', 'intraCommunitySupply'), line('600.00', '0', 'reverseCharge')]);
  await sale(t, ch.id, [line('700.00', '0', 'export'), line('800.00', '0', 'notSubject')]);
  // A legacy line without category (written before categories existed): inferred as before.
  const legacy = await sale(t, home.id, [line('50.00', '0', 'exempt', 'DE-4-8')]);
  await db()('invoiceItems').where({ invoiceId: legacy.id }).update({ taxCategory: null, exemptionReason: null });
  await purchase(t, '1000.00', 'reverseCharge');
  await purchase(t, '2000.00', 'intraCommunitySupply');

  const small = await createTeam({
    country: 'DE',
    vatId: 'DE987654321',
    taxNumber: '9198011310011',
    address: 'Musterstraße 2\n10115 Berlin',
    settings: JSON.stringify({ datev: { chart }, smallBusiness: true }),
  });
  const smallCustomer = await createCustomer(small.tenant, { name: 'Inland', country: 'DE' });
  await sale(small.tenant, smallCustomer.id, [line('150.00', '0')]);
  await purchase(small.tenant, '250.00', 'reverseCharge');
  const office = await createSupplier(small.tenant, { name: 'Bürobedarf' });
  await createIncomingInvoice(small.tenant, undefined, { supplierId: office.id, invoiceDate: '2026-03-12', items: [line('100.00', '19')] });
  return { team, small };
}

describe('DATEV rows per VAT category', () => {
  it('SKR03: automatic revenue accounts without key, 0 % turnover on its account per category, § 13b and ig. Erwerb with BU 94 / 19', async () => {
    const { team, small } = await germanBook('SKR03');
    expect(await datevRows(team.viewer.token)).toEqual(
      [
        '119,00|S|1410|8400|', // standard 19 %
        '200,00|S|1410|8290|', // zeroRated (§ 12 Abs. 3 UStG)
        '300,00|S|1410|8100|', // exempt § 4 Nr. 14
        '400,00|S|1410|8105|', // exempt § 4 Nr. 12 (rent)
        '500,00|S|1410|8125|', // intra-Community supply
        '600,00|S|1410|8336|', // reverse charge (EU service)
        '700,00|S|1410|8120|', // export
        '800,00|S|1410|8338|', // not subject
        '50,00|S|1410|8100|', // legacy, unclassified: tax-free as inferred before
        '1000,00|H|1610|4900|94', // § 13b purchase
        '2000,00|H|1610|4900|19', // intra-Community acquisition
      ].sort(),
    );
    // Small business: § 19 revenue; no input tax: its 19 % purchase without key 9, its § 13b
    // purchase without 94 (the tax is owed, not deductible).
    expect(await datevRows(small.viewer.token)).toEqual(['119,00|H|1610|4900|', '150,00|S|1410|8195|', '250,00|H|1610|4900|']);
  });

  it('SKR04: the same book on the SKR04 accounts', async () => {
    const { team, small } = await germanBook('SKR04');
    expect(await datevRows(team.viewer.token)).toEqual(
      [
        '119,00|S|1210|4400|',
        '200,00|S|1210|4290|',
        '300,00|S|1210|4100|',
        '400,00|S|1210|4105|',
        '500,00|S|1210|4125|',
        '600,00|S|1210|4336|',
        '700,00|S|1210|4120|',
        '800,00|S|1210|4338|',
        '50,00|S|1210|4100|',
        '1000,00|H|3310|6300|94',
        '2000,00|H|3310|6300|19',
      ].sort(),
    );
    expect(await datevRows(small.viewer.token)).toEqual(['119,00|H|3310|6300|', '150,00|S|1210|4185|', '250,00|H|3310|6300|']);
  });

  it('EKR (AT): class-4 defaults per category; purchases without a key (advisor books the tax)', async () => {
    const team = await createTeam({ country: 'AT' });
    const t = team.tenant;
    const home = await createCustomer(t, { name: 'Inland', country: 'AT' });
    const de = await createCustomer(t, { name: 'DE Kunde', company: 'Kunde GmbH', country: 'DE', vatId: 'DE123456789' });
    const ch = await createCustomer(t, { name: 'CH Kunde', company: 'Kunde AG', country: 'CH' });
    await sale(t, home.id, [line('100.00', '20'), line('300.00', '0', 'exempt', 'AT-6-1-19'), line('400.00', '0', 'exempt', 'AT-6-1-16')]);
    await sale(t, de.id, [line('500.00', '0', 'intraCommunitySupply'), line('600.00', '0', 'reverseCharge')]);
    await sale(t, ch.id, [line('700.00', '0', 'export'), line('800.00', '0', 'notSubject')]);
    await purchase(t, '1000.00', 'reverseCharge');
    expect(await datevRows(team.viewer.token)).toEqual(
      [
        '120,00|S|2000|4000|3',
        '300,00|S|2000|4190|', // exempt § 6 Abs. 1 Z 19: one row per category and reason
        '400,00|S|2000|4190|', // exempt § 6 Abs. 1 Z 16
        '500,00|S|2000|4100|',
        '600,00|S|2000|4120|',
        '700,00|S|2000|4110|',
        '800,00|S|2000|4130|',
        '1000,00|H|3300|7890|',
      ].sort(),
    );
  });
});
