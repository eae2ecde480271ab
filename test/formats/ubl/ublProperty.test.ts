/**
 * Random invoices and credit notes (mixed AT rates, customers with and without VAT id, partial
 * payments, hostile descriptions) in both UBL profiles: valid against the UBL 2.1 XSD, clean in the
 * rule check, and what is read back out of the XML is what the model said (round trip).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toEInvoiceModel } from '../../../shared/formats/cii/einvoiceModel';
import type { EInvoiceModel } from '../../../shared/formats/cii/einvoiceModelTypes';
import { formatAmount, formatDecimal } from '../../../shared/formats/cii/numberFormat';
import { buildUblInvoice, checkUblInvoice } from '../../../shared/formats/ubl/ublInvoice';
import { needsOfficialFiles, type OfficialFile, officialPath } from '../../helpers/officialFiles';
import { validateXml } from '../../helpers/xmllint';
import { documentArb } from '../cii/fixtures';
import { readBackUbl } from './readBack';

const INVOICE_XSD: OfficialFile = 'schemas:ubl-2.1/maindoc/UBL-Invoice-2.1.xsd';
const CREDIT_NOTE_XSD: OfficialFile = 'schemas:ubl-2.1/maindoc/UBL-CreditNote-2.1.xsd';
const official = needsOfficialFiles([INVOICE_XSD, CREDIT_NOTE_XSD]);

/** The fields the route will fill from stored data once it exists. */
function withReferences(m: EInvoiceModel): EInvoiceModel {
  return {
    ...m,
    seller: { ...m.seller, electronicAddress: { scheme: '9914', id: m.seller.vatId! } },
    buyer: { ...m.buyer, electronicAddress: { scheme: '0204', id: '991-12345-67' } },
    buyerReference: '991-12345-67',
    orderReference: null,
  };
}

describe('UBL property tests', () => {
  for (const profile of ['peppol', 'xrechnung'] as const) {
    it(`${profile}: every random document validates, passes the check and reads back as its model`, () => {
      fc.assert(
        fc.property(documentArb, (input) => {
          const m = withReferences(toEInvoiceModel(input));
          const xml = buildUblInvoice(m, { profile });
          expect(checkUblInvoice(m, xml, profile)).toEqual([]);
          if (official) expect(validateXml(xml, officialPath(m.kind === 'invoice' ? INVOICE_XSD : CREDIT_NOTE_XSD)).errors).toBe('');
          const back = readBackUbl(xml);
          expect(back).toMatchObject({
            kind: m.kind,
            number: m.number,
            issueDate: m.issueDate,
            currency: m.currency,
            buyerReference: m.buyerReference,
            sellerName: m.seller.name,
            buyerName: m.buyer.name,
            sellerEndpoint: m.seller.electronicAddress,
            buyerEndpoint: m.buyer.electronicAddress,
          });
          expect(back.lines).toEqual(
            m.lines.map((l) => ({
              id: String(l.position),
              quantity: formatDecimal(l.quantity),
              unitCode: l.unitCode,
              net: formatAmount(l.netAmount),
              price: l.unitPrice.toFixed(2),
              name: l.name.trim(),
              category: l.category,
              rate: l.category === 'O' ? undefined : formatDecimal(l.taxRate),
            })),
          );
          expect(back.taxGroups.map((g) => [g.basis, g.tax, g.category])).toEqual(
            m.taxGroups.map((g) => [formatAmount(g.basis), formatAmount(g.tax), g.category]),
          );
          expect(back.totals).toMatchObject({
            net: formatAmount(m.totals.net),
            gross: formatAmount(m.totals.gross),
            due: formatAmount(m.totals.due),
            tax: formatAmount(m.totals.tax),
          });
        }),
        { numRuns: 40 },
      );
    });
  }
});
