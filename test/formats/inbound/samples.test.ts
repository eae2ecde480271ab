/**
 * Every published sample of SAMPLES_DIR/einvoices/manifest.json is read and matches the header
 * data and totals the manifest took from the document; what the manifest marks as invalid,
 * legacy or below EN 16931 gets the behaviour docs/e-invoicing-inbound.md documents.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Decimal from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { readEInvoice, reconcile } from '../../../shared/formats/inbound/readEInvoice';
import type { InboundTotals } from '../../../shared/formats/inbound/types';
import { needsOfficialFiles, officialPath } from '../../helpers/officialFiles';

interface ManifestEntry {
  id: string;
  file: string;
  syntax: 'UBL' | 'CII' | 'PDF-hybrid' | 'ebInterface';
  document_type: 'invoice' | 'credit_note';
  expected: 'valid' | 'invalid' | 'valid-profile-only' | 'valid-legacy';
  profile: string;
  currency: string;
  invoice_number: string;
  issue_date: string;
  due_date: string | null;
  seller_name: string;
  seller_vat_id: string | null;
  seller_country: string;
  buyer_reference: string | null;
  iban: string | null;
  line_count: number;
  totals: Record<string, string | null>;
}

const MANIFEST = 'samples:einvoices/manifest.json' as const;
const official = needsOfficialFiles([MANIFEST]);
const manifest: ManifestEntry[] = official ? JSON.parse(readFileSync(officialPath(MANIFEST), 'utf8')) : [];
const sampleBytes = (s: ManifestEntry) => readFileSync(path.join(path.dirname(officialPath(MANIFEST)), s.file));
const mediaType = (s: ManifestEntry) => (s.file.endsWith('.pdf') ? 'application/pdf' : 'application/xml');

const TOTALS: Record<string, keyof InboundTotals> = {
  'BT-106_line_net': 'lineNet',
  'BT-107_allowances': 'allowances',
  'BT-108_charges': 'charges',
  'BT-109_net': 'net',
  'BT-110_tax': 'tax',
  'BT-112_gross': 'gross',
  'BT-113_prepaid': 'prepaid',
  'BT-114_rounding': 'rounding',
  'BT-115_due': 'due',
};

const readable = manifest.filter((s) => s.expected !== 'valid-legacy');

describe.skipIf(!official)('inbound samples (manifest)', () => {
  it('lists the 54 published samples', () => {
    expect(manifest).toHaveLength(54);
  });

  it.each(readable.map((s) => [s.id, s] as const))('%s: header, lines and totals as the manifest says', async (_id, s) => {
    const r = await readEInvoice(sampleBytes(s), mediaType(s));
    if (!r.ok) throw new Error(`${s.id} refused: ${r.reason}`);
    const inv = r.invoice;
    expect(r.format).toBe(s.syntax === 'PDF-hybrid' ? 'facturx-pdf' : s.syntax === 'ebInterface' ? 'ebinterface' : s.syntax.toLowerCase());
    expect(r.profile).toBe(s.profile);
    expect(inv.kind).toBe(s.document_type === 'credit_note' ? 'creditNote' : 'invoice');
    expect(inv.number).toBe(s.invoice_number);
    expect(inv.issueDate).toBe(s.issue_date);
    expect(inv.dueDate).toBe(s.due_date);
    expect(inv.currency).toBe(s.currency);
    expect(inv.seller.name).toBe(s.seller_name);
    expect(inv.seller.vatId).toBe(s.seller_vat_id);
    expect(inv.seller.address.country).toBe(s.seller_country);
    expect(inv.seller.iban).toBe(s.iban);
    expect(inv.buyerReference).toBe(s.buyer_reference);
    expect(inv.lines).toHaveLength(s.line_count);
    for (const [term, field] of Object.entries(TOTALS)) {
      const want = s.totals[term];
      if (want === null || want === undefined) continue;
      const got = inv.totals[field];
      expect(got, `${term}`).not.toBeNull();
      expect(new Decimal(got as string).eq(want), `${term}: ${got} vs ${want}`).toBe(true);
      // Decimal strings, never numbers, and never an exponent.
      expect(got).toMatch(/^-?\d+\.\d{2,4}$/);
    }
  });

  it.each(readable.filter((s) => s.expected === 'valid' && s.syntax !== 'ebInterface').map((s) => [s.id, s] as const))(
    '%s: lines, allowances and charges reconcile with BT-106..BT-115',
    async (_id, s) => {
      const r = await readEInvoice(sampleBytes(s), mediaType(s));
      if (!r.ok) throw new Error(r.reason);
      expect(reconcile(r.invoice).differences).toEqual([]);
    },
  );

  it('the published ebInterface 6.1 samples do not add up, and reconcile says where', async () => {
    for (const s of manifest.filter((m) => m.syntax === 'ebInterface')) {
      const r = await readEInvoice(sampleBytes(s), mediaType(s));
      if (!r.ok) throw new Error(r.reason);
      const result = reconcile(r.invoice);
      expect(result.matches, s.id).toBe(false);
      expect(result.differences.map((d) => d.term)).toContain('BT-112');
    }
  });

  it('BASIC WL / MINIMUM: the header and totals are read, without lines, with a warning', async () => {
    const below = manifest.filter((s) => s.expected === 'valid-profile-only');
    expect(below.length).toBeGreaterThan(0);
    for (const s of below) {
      const r = await readEInvoice(sampleBytes(s), mediaType(s));
      if (!r.ok) throw new Error(r.reason);
      expect(r.invoice.lines).toEqual([]);
      expect(r.warnings.join('\n')).toMatch(/carries no invoice lines/);
      expect(reconcile(r.invoice).differences).toEqual([]);
    }
  });

  it('ZUGFeRD 1.0 (legacy) is refused with a reason', async () => {
    const legacy = manifest.filter((s) => s.expected === 'valid-legacy');
    expect(legacy.length).toBeGreaterThan(0);
    for (const s of legacy) {
      const r = await readEInvoice(sampleBytes(s), mediaType(s));
      expect(r).toEqual({ ok: false, reason: expect.stringMatching(/ZUGFeRD 1\.0/) });
    }
  });

  it('samples marked invalid are read with a warning that names the defect', async () => {
    const invalid = manifest.filter((s) => s.expected === 'invalid');
    expect(invalid.map((s) => s.id).sort()).toEqual(['ebi61-ecosio-invalid', 'pdf-xml-invalid']);
    const warnings = new Map<string, string>();
    for (const s of invalid) {
      const r = await readEInvoice(sampleBytes(s), mediaType(s));
      if (!r.ok) throw new Error(r.reason);
      warnings.set(s.id, r.warnings.join('\n'));
    }
    // The FeRD PDF's embedded XML declares a malformed specification identifier.
    expect(warnings.get('pdf-xml-invalid')).toMatch(/specification identifier \(BT-24\).*is not an EN 16931 one/);
    // The ecosio sample leaves out the cancelled document's number the XSD requires.
    expect(warnings.get('ebi61-ecosio-invalid')).toMatch(/CancelledOriginalDocument has no InvoiceNumber/);
  });

  it('decodes the predefined entities in text (ebInterface buyer "VGB GmbH & Co KG")', async () => {
    const s = manifest.find((m) => m.id === 'ebi61-ecosio');
    if (!s) throw new Error('sample missing from the manifest');
    const r = await readEInvoice(sampleBytes(s), mediaType(s));
    if (!r.ok) throw new Error(r.reason);
    expect(r.invoice.buyer.name).toBe('VGB GmbH & Co KG');
  });
});
