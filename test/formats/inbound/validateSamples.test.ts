/**
 * The validation report over the published samples of SAMPLES_DIR/einvoices/manifest.json: no
 * sample the manifest marks valid gets a fatal finding (the KoSIT extension and CVD samples
 * included, which break CEN rules by design under their own scenario), every sample it marks
 * invalid gets at least one.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEInvoice } from '../../../shared/formats/inbound/readEInvoice';
import { validateEInvoice } from '../../../shared/formats/inbound/validate';
import { needsOfficialFiles, officialPath } from '../../helpers/officialFiles';

interface ManifestEntry {
  id: string;
  file: string;
  expected: 'valid' | 'invalid' | 'valid-profile-only' | 'valid-legacy';
}

const MANIFEST = 'samples:einvoices/manifest.json' as const;
const official = needsOfficialFiles([MANIFEST]);
const manifest: ManifestEntry[] = official ? JSON.parse(readFileSync(officialPath(MANIFEST), 'utf8')) : [];

async function findings(s: ManifestEntry) {
  const bytes = readFileSync(path.join(path.dirname(officialPath(MANIFEST)), s.file));
  const r = await readEInvoice(bytes, s.file.endsWith('.pdf') ? 'application/pdf' : 'application/xml');
  if (!r.ok) throw new Error(`${s.file} was not read: ${r.reason}`);
  return validateEInvoice(r);
}

// ZUGFeRD 1.0 is not read at all (docs/e-invoicing-inbound.md), so there is nothing to validate.
const valid = manifest.filter((s) => s.expected === 'valid' || s.expected === 'valid-profile-only');
const invalid = manifest.filter((s) => s.expected === 'invalid');

describe.skipIf(!official)('validation report over the published samples', () => {
  it('has valid and invalid samples to check', () => {
    expect(valid.length).toBeGreaterThanOrEqual(50);
    expect(invalid.length).toBeGreaterThanOrEqual(2);
  });

  it.each(valid.map((s) => [s.id, s] as const))('%s (valid): no fatal finding', async (_id, s) => {
    const fatal = (await findings(s)).filter((f) => f.severity === 'fatal');
    expect(fatal).toEqual([]);
  });

  it.each(invalid.map((s) => [s.id, s] as const))('%s (invalid): at least one fatal finding', async (_id, s) => {
    const fatal = (await findings(s)).filter((f) => f.severity === 'fatal');
    expect(fatal.length).toBeGreaterThan(0);
  });

  it('names what is wrong in the two invalid samples', async () => {
    const byFile = (file: string) => manifest.find((s) => s.file === file)!;
    expect((await findings(byFile('pdf/XMLinvalidV2PDF.pdf'))).map((f) => f.rule)).toEqual(['X-PROFILE']);
    expect(await findings(byFile('ebinterface/ebinterface_6p1_sample_ecosio_invalid.xml'))).toEqual([
      { rule: 'X-SCHEMA', message: 'Invoice/CancelledOriginalDocument: required element InvoiceNumber is missing', severity: 'fatal' },
    ]);
  });
});
