/**
 * Every official sample of the manifest through the API and a real worker
 * (docs/e-invoicing-inbound.md, "What the published samples give"): each into a fresh tenant, so a
 * sample sharing another's supplier and number is not a duplicate. valid / valid-profile-only end
 * imported with the manifest's BT-109 / BT-110 / BT-112 in the document's currency (a credit note
 * booked negative); invalid ones are rejected or imported flagged valid: false; ZUGFeRD 1.0 is
 * rejected with its reason; the two ebInterface 6.1 "valid" samples do not add up and stay
 * rejected with the differences. German tenant for all, Austrian for the ebInterface samples.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkers, type RunningWorkers } from '../../../workers/worker';
import { createTenant, createUser } from '../../helpers/factories';
import { useTestServer } from '../../helpers/server';
import { settledImport } from '../../helpers/incomingEinvoices';
import { needsOfficialFiles, officialPath } from '../../helpers/officialFiles';

interface ManifestEntry {
  id: string;
  file: string;
  document_type: 'invoice' | 'credit_note';
  expected: 'valid' | 'invalid' | 'valid-legacy' | 'valid-profile-only';
  currency: string;
  invoice_number: string;
  totals: Record<string, string | null>;
}

const MANIFEST = 'samples:einvoices/manifest.json' as const;
const official = needsOfficialFiles([MANIFEST]);
const manifest: ManifestEntry[] = official ? JSON.parse(readFileSync(officialPath(MANIFEST), 'utf8')) : [];
const bytesOf = (e: ManifestEntry) => readFileSync(path.join(path.dirname(officialPath(MANIFEST)), e.file));
const mediaType = (e: ManifestEntry) => (e.file.endsWith('.pdf') ? 'application/pdf' : 'application/xml');
/** The booked amount: the manifest's, to the cent, negative for a credit note. */
const booked = (e: ManifestEntry, v: string | null) => {
  const n = Number(v) * (e.document_type === 'credit_note' ? -1 : 1);
  return (Object.is(n, -0) ? 0 : n).toFixed(2);
};
/** The ebInterface 6.1 samples marked valid whose own figures do not add up (net + tax ≠ gross). */
const NOT_ADDING_UP = ['ebinterface/ebinterface_6p1_sample_ecosio.xml', 'ebinterface/ebinterface_6p1_sample_more_consistent.xml'];

const env = useTestServer();
let workers: RunningWorkers;
const uploads = new Map<string, { id: string; token: string }>();

beforeAll(async () => {
  if (!official) return;
  workers = await startWorkers({ queues: ['documents', 'maintenance'], schedule: false });
  await Promise.all(
    manifest.map(async (e) => {
      const austrian = e.file.startsWith('ebinterface/');
      const tenant = await createTenant(austrian ? { country: 'AT', vatId: 'ATU13585627' } : { country: 'DE', vatId: 'DE811907980' });
      const member = await createUser(tenant, 'member');
      const res = await env.http.request('POST', '/api/incoming-einvoices', {
        token: member.token,
        rawBody: bytesOf(e),
        headers: { 'content-type': mediaType(e) },
      });
      expect(res.status).toBe(202);
      uploads.set(e.id, { id: res.body.id, token: member.token });
    }),
  );
  // And a German invoice received by an Austrian tenant: its 19 % / 7 % are foreign VAT there.
  const at = await createTenant({ country: 'AT', vatId: 'ATU13585627' });
  const atMember = await createUser(at, 'member');
  const de = manifest.find((e) => e.id === 'xrts-ubl-01.01a')!;
  const res = await env.http.request('POST', '/api/incoming-einvoices', {
    token: atMember.token,
    rawBody: bytesOf(de),
    headers: { 'content-type': mediaType(de) },
  });
  uploads.set('AT:xrts-ubl-01.01a', { id: res.body.id, token: atMember.token });
}, 120_000);
afterAll(async () => workers?.close());

async function settled(entryId: string) {
  const { id, token } = uploads.get(entryId)!;
  // The first sample waits for the 54 queued before it may be done, on a possibly loaded host.
  const row = await settledImport(env.http, token, id, `the import of ${entryId}`, 280_000);
  return { row, token };
}

describe.skipIf(!official)('every manifest sample through the API and a real worker', () => {
  it.each(manifest.filter((e) => (e.expected === 'valid' || e.expected === 'valid-profile-only') && !NOT_ADDING_UP.includes(e.file)).map((e) => [e.id, e]))(
    '%s is imported with the document’s totals',
    async (_id, e) => {
      const { row, token } = await settled(e.id);
      expect(row, JSON.stringify(row.errors)).toMatchObject({ status: 'imported' });
      const invoice = await env.http.get(`/api/invoices/${row.invoiceId}`, { token });
      expect(invoice.body).toMatchObject({
        type: 'eingangsrechnung',
        invoiceNumber: e.invoice_number,
        currency: e.currency,
        totalNet: booked(e, e.totals['BT-109_net']),
        totalTax: booked(e, e.totals['BT-110_tax']),
        totalGross: booked(e, e.totals['BT-112_gross']),
      });
      if (e.currency !== 'EUR' && !invoice.body.exchangeRate) {
        // No ECB rate stored for that day in a fresh database: booked without, with the warning.
        expect(row.warnings).toContainEqual(expect.stringMatching(new RegExp(`^no ECB rate for ${e.currency} on `)));
      }
    },
    300_000,
  );

  it('xrts-ubl-01.01a received by an Austrian tenant is imported with its totals as foreign VAT, outside the U30 input tax', async () => {
    const e = manifest.find((m) => m.id === 'xrts-ubl-01.01a')!;
    const { row, token } = await settled('AT:xrts-ubl-01.01a');
    expect(row.status).toBe('imported');
    expect(row.warnings).toContainEqual(expect.stringMatching(/^foreign VAT from a supplier in DE at .* booked as foreignVat/));
    const invoice = await env.http.get(`/api/invoices/${row.invoiceId}`, { token });
    expect(invoice.body).toMatchObject({ totalNet: booked(e, e.totals['BT-109_net']), totalTax: booked(e, e.totals['BT-110_tax']) });
    expect(new Set(invoice.body.items.map((i: { taxCategory: string }) => i.taxCategory))).toEqual(new Set(['foreignVat']));
    const u30 = await env.http.get('/api/reports/ust?year=2016&month=4', { token });
    expect(u30.status).toBe(200);
    expect(u30.body.kennzahlen['060']).toBe('0.00');
  }, 300_000);

  it.each(NOT_ADDING_UP)(
    '%s (marked valid) does not add up and is rejected with the differences',
    async (file) => {
      const e = manifest.find((m) => m.file === file)!;
      // The manifest's own figures: BT-109 + BT-110 ≠ BT-112.
      expect(Number(e.totals['BT-109_net']) + Number(e.totals['BT-110_tax'])).not.toBeCloseTo(Number(e.totals['BT-112_gross']), 2);
      const { row } = await settled(e.id);
      expect(row.status).toBe('rejected');
      expect(row.invoiceId).toBeNull();
      expect(row.errors.map((p: { rule: string }) => p.rule)).toContain('BR-CO-15');
    },
    300_000,
  );

  it.each(manifest.filter((e) => e.expected === 'invalid').map((e) => [e.id, e]))(
    '%s (invalid) is rejected or imported flagged',
    async (_id, e) => {
      const { row } = await settled(e.id);
      expect(['rejected', 'imported']).toContain(row.status);
      if (row.status === 'rejected') expect(row.errors.length).toBeGreaterThan(0);
      else expect(row.valid).toBe(false);
    },
    300_000,
  );

  it.each(manifest.filter((e) => e.expected === 'valid-legacy').map((e) => [e.id, e]))(
    '%s (ZUGFeRD 1.0) is rejected with its reason',
    async (_id, e) => {
      const { row } = await settled(e.id);
      expect(row).toMatchObject({ status: 'rejected', invoiceId: null });
      expect(row.errors[0]).toMatchObject({ rule: 'READ', message: expect.stringMatching(/ZUGFeRD 1\.0/) });
    },
    300_000,
  );
});
