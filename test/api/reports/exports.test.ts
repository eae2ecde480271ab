import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import { db } from '../../../shared/db';
import { startTestServer } from '../../helpers/server';
import { client } from '../../helpers/http';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createSentInvoice } from '../../helpers/invoiceFactory';
import { validateXml } from '../../helpers/xmllint';
import { needsOfficialFiles, schemaPath } from '../../helpers/officialFiles';

/**
 * 0 % sales to a customer whose country (snapshot at finalization) is outside the EU are exports:
 * U30 KZ 011, UStVA Kz 43, DATEV's export revenue account. 0 % sales without a country stay
 * unclassified (the XML refuses them), as before.
 */
let server: Awaited<ReturnType<typeof startTestServer>>;
const official = needsOfficialFiles(['schemas:u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_01_2022.xsd']);

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function sale(tenant: { id: string }, customerId: string, date: string, unitPrice: string, taxRate: string) {
  const inv = await createSentInvoice(tenant, null, { customerId, items: [{ description: 'Lieferung', quantity: '1', unitPrice, taxRate }] });
  await db()('invoices').where({ id: inv.id }).update({ issueDate: date, dueDate: date });
  return inv;
}

describe('0 % sales to customers outside the EU', () => {
  it.skipIf(!official)('AT: KZ 011 in json and xml (valid), DATEV on the export account 4110; without a country: unclassified', async () => {
    const team = await createTeam({ country: 'AT', taxNumber: '12-345/6789' });
    const swiss = await createCustomer(team.tenant, { name: 'Zürich AG', country: 'CH' });
    const domestic = await createCustomer(team.tenant, { name: 'Inland' });
    const eu = await createCustomer(team.tenant, { name: 'DE GmbH', vatId: 'DE123456789' });
    await sale(team.tenant, swiss.id, '2026-03-10', '2000.00', '0');
    await sale(team.tenant, eu.id, '2026-03-11', '500.00', '0');
    await sale(team.tenant, domestic.id, '2026-03-12', '100.00', '20');
    const http = client(server.url, { token: team.viewer.token });

    const res = await http.get('/api/reports/ust?year=2026&month=3');
    // 000 = 2000.00 + 500.00 + 100.00; 011 = the Swiss sale; 021 = the German VAT ID
    expect(res.body.kennzahlen).toMatchObject({ '000': '2600.00', '011': '2000.00', '017': '0.00', '021': '500.00', '022': '100.00', '095': '20.00' });
    expect(res.body.unclassifiedZeroRatedNet).toBe('0.00');
    const xml = await http.get('/api/reports/ust?year=2026&month=3&format=xml');
    expect(xml.status).toBe(200);
    expect(iconv.decode(xml.raw, 'latin1')).toContain('<KZ011 type="kz">2000.00</KZ011>');
    const { valid, errors } = validateXml(xml.raw, schemaPath('u30-finanzonline/BMF_ERKLAERUNGS_UEBERMITTLUNG_U30_01_2022.xsd'));
    expect(valid, errors).toBe(true);

    const rows = iconv
      .decode((await http.get('/api/reports/datev?year=2026&month=3')).raw, 'windows-1252')
      .trimEnd()
      .split('\r\n')
      .slice(2)
      .map((l) => l.split(';'));
    expect(rows.map((r) => `${r[0]}|${r[7]}`).sort()).toEqual(['120,00|4000', '2000,00|4110', '500,00|4120'].sort());

    // A 0 % sale to a customer without any country, written before lines had a VAT category (send
    // refuses such a line now), stays unclassified: shown, not filed.
    const legacy = await createSentInvoice(team.tenant, null, {
      customerId: domestic.id,
      items: [{ description: 'Lieferung', quantity: '1', unitPrice: '70.00', taxRate: '0', taxCategory: 'exempt', exemptionReason: 'AT-6-1-8' }],
    });
    await db()('invoices').where({ id: legacy.id }).update({ issueDate: '2026-03-13', dueDate: '2026-03-13' });
    await db()('invoiceItems').where({ invoiceId: legacy.id }).update({ taxCategory: null, exemptionReason: null });
    expect((await http.get('/api/reports/ust?year=2026&month=3')).body.unclassifiedZeroRatedNet).toBe('70.00');
    expect((await http.get('/api/reports/ust?year=2026&month=3&format=xml')).status).toBe(422);
  });

  it('DE: Kz 43 (whole euros)', async () => {
    const team = await createTeam({ country: 'DE', vatId: 'DE123456789', taxNumber: '9198011310010' });
    const us = await createCustomer(team.tenant, { name: 'US Inc.', country: 'US' });
    await sale(team.tenant, us.id, '2026-03-10', '999.99', '0');
    const res = await client(server.url, { token: team.viewer.token }).get('/api/reports/ust?year=2026&month=3');
    expect(res.body.kennzahlen).toMatchObject({ '43': '999', '21': '0', '81': '0' });
    expect(res.body.unclassifiedZeroRatedNet).toBe('0.00');
  });
});
