/**
 * GET /api/invoices/:id/pdf of an incoming invoice imported from an e-invoice renders the stored
 * original (docs/e-invoicing-inbound.md, "The PDF of an imported invoice"), through the documents
 * worker and its artifact cache; any other invoice's PDF is the invoice PDF as before.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { renderDocument } from '../../../shared/documents/renderDocument';
import { loadDocumentSnapshot, SNAPSHOT } from '../../../shared/queries/documentSnapshot';
import { useWorkers } from '../../helpers/workers';
import { createTeam } from '../../helpers/factories';
import { createIncomingInvoice, createSentInvoice } from '../../helpers/invoiceFactory';
import { needsOfficialFiles, officialPath } from '../../helpers/officialFiles';
import { pdfText } from '../../helpers/pdf';
import { useTestServer } from '../../helpers/server';
import { uploadAndSettle } from '../../helpers/incomingEinvoices';

const MANIFEST = 'samples:einvoices/manifest.json' as const;
const official = needsOfficialFiles([MANIFEST]);
const manifest: { id: string; file: string; invoice_number: string }[] = official ? JSON.parse(readFileSync(officialPath(MANIFEST), 'utf8')) : [];
const sample = (id: string) => readFileSync(path.join(path.dirname(officialPath(MANIFEST)), manifest.find((e) => e.id === id)!.file));

const env = useTestServer({ RENDER_WAIT_MS: '30000' });
useWorkers(['documents', 'maintenance']);

type Team = Awaited<ReturnType<typeof createTeam>>;
// pdftotext lays text out in columns; the checks read it with its whitespace collapsed.
const flat = (pdf: Buffer) => pdfText(pdf).replace(/\s+/g, ' ');

async function imported(team: Team, bytes: Buffer, type: string): Promise<string> {
  const row = await uploadAndSettle(env.http, team, bytes, type);
  expect(row.status).toBe('imported');
  return row.invoiceId;
}

describe.skipIf(!official)('the PDF of an imported e-invoice', () => {
  let team: Team;
  beforeAll(async () => {
    team = await createTeam({ country: 'DE', vatId: 'DE811907980' });
  });

  it('a KoSIT XRechnung UBL renders its own data, marked as a rendering with the original’s SHA-256', async () => {
    const bytes = sample('xrts-ubl-01.01a');
    const invoiceId = await imported(team, bytes, 'application/xml');
    const res = await env.http.get(`/api/invoices/${invoiceId}/pdf`, { token: team.viewer.token });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const text = flat(res.raw);
    const sha = createHash('sha256').update(bytes).digest('hex');
    expect(text).toContain(`Darstellung der E-Rechnung (nicht das Original; Original: XRechnung (UBL), SHA-256 ${sha})`);
    // BT-1, the seller (BG-4), both lines with quantity, unit, price and VAT, the breakdown and totals BT-106…BT-115.
    expect(text).toContain('Rechnungsnummer (BT-1) 123456XX');
    expect(text).toContain('[Seller name]');
    expect(text).toContain('[Buyer name]');
    // (pdftotext may drop the spaces of a narrow right-aligned cell: "S 7 %" → "S7%".)
    expect(text).toMatch(/Zeitschrift \[\.\.\.\] 1 Stück \(XPP\) 288,79 S ?7 ?% 288,79 EUR/);
    expect(text).toMatch(/Porto \+ Versandkosten 1 Stück \(XPP\) 26,07 S ?7 ?% 26,07 EUR/);
    expect(text).toMatch(/S ?7 ?% 314,86 EUR 22,04 EUR/);
    expect(text).toContain('Summe der Positionen netto (BT-106) 314,86 EUR');
    expect(text).toContain('Gesamtbetrag netto (BT-109) 314,86 EUR');
    expect(text).toContain('Umsatzsteuer (BT-110) 22,04 EUR');
    expect(text).toContain('Gesamtbetrag brutto (BT-112) 336,90 EUR');
    expect(text).toContain('Zahlbetrag (BT-115) 336,90 EUR');
    expect(text).toContain('IBAN (BT-84) DE79 0000 0000 1234 5678 90');
    expect(text).toContain('Zahlbar sofort ohne Abzug.');
    expect(text).toContain('Es gelten unsere Allgem. Geschäftsbedingungen');
    expect(text).toContain('Käuferreferenz (BT-10) 04011000-12345-03');

    // Rendered once by the worker and cached as the invoice's pdf; the original stays at /original.
    const again = await env.http.get(`/api/invoices/${invoiceId}/pdf`, { token: team.viewer.token });
    expect(again.raw.equals(res.raw)).toBe(true);
    expect(await db()('documents').where({ invoiceId, kind: 'pdf' })).toHaveLength(1);
    const original = await env.http.get(`/api/invoices/${invoiceId}/original`, { token: team.viewer.token });
    expect(original.raw.equals(bytes)).toBe(true);
  });

  it('a Factur-X PDF: /pdf is the rendering too (the supplier’s PDF is at /original)', async () => {
    const bytes = sample('pdf-en16931-einfach');
    const invoiceId = await imported(team, bytes, 'application/pdf');
    const res = await env.http.get(`/api/invoices/${invoiceId}/pdf`, { token: team.viewer.token });
    expect(res.status).toBe(200);
    expect(res.raw.equals(bytes)).toBe(false);
    const text = flat(res.raw);
    expect(text).toContain('Original: Factur-X / ZUGFeRD PDF (CII)');
    expect(text).toContain('Rechnungsnummer (BT-1) 471102');
    expect(text).toContain('Lieferant GmbH');
    expect(text).toContain('Gesamtbetrag brutto (BT-112) 529,87 EUR');
  });
});

describe('PDFs of other invoices', () => {
  it('a sales invoice and a typed-in incoming invoice render as before, without the marking', async () => {
    const team = await createTeam({ country: 'AT' });
    const sale = await createSentInvoice(team.tenant, team.admin);
    const incoming = await createIncomingInvoice(team.tenant, team.admin);
    for (const inv of [sale, incoming]) {
      const res = await env.http.get(`/api/invoices/${inv.id}/pdf`, { token: team.viewer.token });
      expect(res.status).toBe(200);
      expect(flat(res.raw)).not.toContain('Darstellung der E-Rechnung');
      // Byte for byte what the invoice renderer makes of the invoice (the PDF is deterministic).
      const snapshot = await db().transaction((trx) => loadDocumentSnapshot(trx, team.tenant.id, inv.id), SNAPSHOT);
      expect(res.raw.equals(await renderDocument('pdf', snapshot!.input))).toBe(true);
    }
  });
});
