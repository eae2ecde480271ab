/**
 * Issue 28, item 10 "Validation report", through the API and a real worker: a document that
 * breaks official rules but whose amounts reconcile is imported, flagged `valid: false` with the
 * rule ids in `errors`; one whose amounts do not reconcile is rejected
 * (docs/e-invoicing-inbound.md, "Validation report").
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { useWorkers } from '../../helpers/workers';
import { createTeam } from '../../helpers/factories';
import { useTestServer } from '../../helpers/server';
import { uploadAndSettle } from '../../helpers/incomingEinvoices';
import { needsOfficialFiles, officialPath } from '../../helpers/officialFiles';

const SAMPLE = 'samples:einvoices/xrechnung-testsuite/01.01a-INVOICE_ubl.xml' as const;
const official = needsOfficialFiles([SAMPLE]);

const env = useTestServer();
useWorkers(['documents', 'maintenance']);

type Team = Awaited<ReturnType<typeof createTeam>>;

async function importXml(team: Team, xml: string) {
  return uploadAndSettle(env.http, team, Buffer.from(xml, 'utf8'));
}

describe.skipIf(!official)('validation report on import', () => {
  let team: Team;
  let xml: string;
  beforeAll(async () => {
    team = await createTeam({ country: 'DE', vatId: 'DE811907980' });
    xml = official ? readFileSync(officialPath(SAMPLE), 'utf8') : '';
  });

  it('an XRechnung without buyer reference and with its ID after the issue date is imported, valid: false, with the rule ids', async () => {
    const broken = xml
      .replace(/<cbc:BuyerReference>[^<]*<\/cbc:BuyerReference>/, '')
      .replace(/(<cbc:ID>123456XX<\/cbc:ID>)(\s*)(<cbc:IssueDate>[^<]*<\/cbc:IssueDate>)/, '$3$2$1');
    expect(broken).not.toBe(xml);
    const row = await importXml(team, broken);
    expect(row, JSON.stringify(row)).toMatchObject({ status: 'imported', valid: false });
    expect(row.invoiceId).toEqual(expect.any(String));
    expect(row.errors.map((e: { rule: string }) => e.rule).sort()).toEqual(['BR-DE-15', 'X-SCHEMA']);
    expect(row.errors.find((e: { rule: string }) => e.rule === 'BR-DE-15').message).toMatch(/Buyer reference/);

    const invoice = await env.http.get(`/api/invoices/${row.invoiceId}`, { token: team.viewer.token });
    expect(invoice.body).toMatchObject({ type: 'eingangsrechnung', invoiceNumber: '123456XX', totalGross: '336.90' });
  });

  it('the same breaks with amounts that do not reconcile: rejected, nothing booked', async () => {
    const broken = xml
      .replace(/<cbc:BuyerReference>[^<]*<\/cbc:BuyerReference>/, '')
      .replace('<cbc:ID>123456XX</cbc:ID>', '<cbc:ID>123456XY</cbc:ID>')
      .replace(/(<cbc:TaxInclusiveAmount currencyID="EUR">)[^<]*/, '$1999.99');
    const row = await importXml(team, broken);
    expect(row).toMatchObject({ status: 'rejected', valid: false, invoiceId: null });
    expect(row.errors.map((e: { rule: string }) => e.rule)).toContain('BR-CO-15');
  });
});
