import Decimal from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCiiXml } from '../../../shared/formats/cii/ciiInvoice';
import { EInvoiceExportError } from '../../../shared/formats/cii/einvoiceModel';
import { checkEn16931 } from '../../../shared/formats/cii/en16931Rules';
import { validateXml } from '../../helpers/xmllint';
import { needsOfficialFiles } from '../../helpers/officialFiles';
import { CII_XSD, CII_XSD_FILE, documentArb } from './fixtures';

const official = needsOfficialFiles([CII_XSD_FILE]);

describe('CII property tests', () => {
  it.skipIf(!official)('every random invoice validates against the XSD and passes the EN 16931 checker', () => {
    fc.assert(
      fc.property(documentArb, (input) => {
        const xml = buildCiiXml(input);
        const result = validateXml(xml, CII_XSD);
        expect(result.errors).toBe('');
        expect(checkEn16931(xml)).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });

  it('a grand total off by ±1 cent is always refused (BR-CO-15)', () => {
    fc.assert(
      fc.property(documentArb, fc.constantFrom('0.01', '-0.01'), (input, delta) => {
        input.invoice.totalGross = new Decimal(input.invoice.totalGross).plus(delta).toFixed(2);
        let error: unknown;
        try {
          buildCiiXml(input);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(EInvoiceExportError);
        expect((error as EInvoiceExportError).violations.map((v) => v.rule)).toContain('BR-CO-15');
      }),
      { numRuns: 100 },
    );
  });
});
