/**
 * The UBL rule check on the official valid samples (manifest of SAMPLES_DIR/einvoices): the Peppol
 * BIS 3.0 examples pass the peppol rules, the XRechnung 3.0 test suite (CIUS, not the extension)
 * the xrechnung rules. A rule that fires on a valid official document is a false refusal.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkUblRules, UBL_PROFILES, type UblProfile } from '../../../shared/formats/ubl/ublInvoice';
import { needsOfficialFiles, type OfficialFile, officialPath } from '../../helpers/officialFiles';
import { validateXml } from '../../helpers/xmllint';

const MANIFEST: OfficialFile = 'samples:einvoices/manifest.json';
const official = needsOfficialFiles([MANIFEST, 'schemas:ubl-2.1/maindoc/UBL-Invoice-2.1.xsd']);

interface Sample {
  id: string;
  file: string;
  syntax: string;
  expected: 'valid' | 'invalid';
  profile: string;
  document_type: string;
}

function samples(): Array<[Sample, UblProfile]> {
  if (!official) return [];
  const all = JSON.parse(readFileSync(officialPath(MANIFEST), 'utf8')) as Sample[];
  return all
    .filter((s) => s.syntax === 'UBL' && s.expected === 'valid')
    .flatMap((s): Array<[Sample, UblProfile]> => {
      if (s.profile === UBL_PROFILES.xrechnung.customizationId) return [[s, 'xrechnung']];
      if (s.profile.startsWith('urn:fdc:peppol.eu:2017:poacc:billing:3.0') || s.profile === UBL_PROFILES.peppol.customizationId) return [[s, 'peppol']];
      return [];
    });
}

describe.skipIf(!official)('official valid UBL samples pass the UBL rules of their profile', () => {
  const list = samples();
  it('there are samples of both profiles', () => {
    expect(list.filter(([, p]) => p === 'peppol').length).toBeGreaterThan(3);
    expect(list.filter(([, p]) => p === 'xrechnung').length).toBeGreaterThan(3);
  });
  for (const [sample, profile] of list) {
    it(`${sample.id} (${profile})`, () => {
      const file = path.join(path.dirname(officialPath(MANIFEST)), sample.file);
      const xml = readFileSync(file, 'utf8');
      expect(checkUblRules(xml, profile)).toEqual([]);
      // Our XSD check accepts them too, so the writer tests compare with the same yardstick.
      const xsd = officialPath(
        sample.document_type === 'credit_note' || xml.includes(':CreditNote-2"')
          ? 'schemas:ubl-2.1/maindoc/UBL-CreditNote-2.1.xsd'
          : 'schemas:ubl-2.1/maindoc/UBL-Invoice-2.1.xsd',
      );
      expect(validateXml(xml, xsd).errors).toBe('');
    });
  }
});
