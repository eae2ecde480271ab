/**
 * The VAT wording per stored category on the PDF (issue 27): statutory text per category and seller
 * country, the line's exemption note after it, both VAT IDs for an intra-Community supply, no VAT
 * lines on a small business's invoice, and the reverse-charge note only for reverse-charge lines.
 */
import { describe, expect, it } from 'vitest';
import type { DocumentInput, InvoiceItemView } from '../../../shared/domain/invoiceView';
import { renderInvoicePdf } from '../../../shared/formats/pdf/invoicePdf';
import { isSmallBusinessInvoice, reverseCharge, reverseChargeText, vatNotes } from '../../../shared/formats/pdf/legalNotes';
import { makeDocumentInput } from './fixtures';
import { allText } from './pdfTools';

type Vat = Pick<InvoiceItemView, 'taxCategory' | 'exemptionReason' | 'exemptionNote'>;

function withCategories(input: DocumentInput, vats: Vat[]): DocumentInput {
  input.invoice.items = input.invoice.items.map((item, i) => ({ exemptionReason: null, exemptionNote: null, ...item, ...vats[i] }));
  return input;
}

const items = (rates: string[]) => rates.map((taxRate, i) => ({ description: `Position ${i + 1}`, quantity: '1', unitPrice: '100.00', taxRate }));
const flat = (s: string) => s.replace(/\s+/g, ' ');

describe('vatNotes', () => {
  it('prints nothing for documents without stored categories (they keep the reverse-charge inference)', () => {
    expect(vatNotes(makeDocumentInput({ items: items(['0']) }))).toEqual([]);
  });

  it('names the positions when only some lines are meant, then the line notes', () => {
    const input = withCategories(makeDocumentInput({ items: items(['20', '0', '0']), customer: { vatId: 'ATU87654321', country: 'AT' } }), [
      { taxCategory: 'standard' },
      { taxCategory: 'exempt', exemptionReason: 'AT-6-1-16', exemptionNote: 'Geschäftsraummiete' },
      { taxCategory: 'exempt', exemptionReason: 'AT-6-1-16', exemptionNote: 'Geschäftsraummiete' },
    ]);
    expect(vatNotes(input)).toEqual(['Pos. 2, 3: Vermietung und Verpachtung von Grundstücken: steuerfrei gemäß § 6 Abs. 1 Z 16 UStG 1994. Geschäftsraummiete']);
    expect(reverseCharge(input).applies).toBe(false);
  });

  it('an intra-Community supply names both VAT IDs; a DE seller gets the German provision', () => {
    const input = withCategories(
      makeDocumentInput({ items: items(['0']), seller: { vatId: 'DE123456789', country: 'DE' }, customer: { vatId: 'ATU87654321', country: 'AT' } }),
      [{ taxCategory: 'intraCommunitySupply' }],
    );
    expect(vatNotes(input)).toEqual([
      'Steuerfreie innergemeinschaftliche Lieferung (§ 4 Nr. 1 Buchst. b i. V. m. § 6a UStG). UID des Lieferers: DE123456789. UID des Abnehmers: ATU87654321.',
    ]);
  });

  it('the reverse-charge note stays, for the reverse-charge lines only; their own notes follow in the VAT notes', () => {
    const input = withCategories(makeDocumentInput({ items: items(['20', '0']) }), [
      { taxCategory: 'standard' },
      { taxCategory: 'reverseCharge', exemptionNote: 'Leistungsort Deutschland' },
    ]);
    expect(reverseCharge(input)).toEqual({ applies: true, partial: true, positions: [2] });
    expect(reverseChargeText(reverseCharge(input), 'DE123456789')).toMatch(/^Für Pos\. 2 schuldet der Leistungsempfänger/);
    expect(vatNotes(input)).toEqual(['Pos. 2: Leistungsort Deutschland']);
  });
});

describe('renderInvoicePdf: VAT wording', () => {
  it('a small business (DE § 19): the statutory sentence and no VAT lines in the totals', async () => {
    const input = withCategories(makeDocumentInput({ items: items(['0', '0']), seller: { vatId: null, country: 'DE' }, customer: { vatId: null } }), [
      { taxCategory: 'exempt', exemptionReason: 'DE-19' },
      { taxCategory: 'exempt', exemptionReason: 'DE-19' },
    ]);
    expect(isSmallBusinessInvoice(input)).toBe(true);
    const text = flat(allText(await renderInvoicePdf(input)));
    expect(text).toContain('Hinweise zur Umsatzsteuer');
    expect(text).toContain('Gemäß § 19 UStG wird keine Umsatzsteuer berechnet (Kleinunternehmer).');
    expect(text).not.toContain('Summe USt');
    expect(text).not.toMatch(/USt 0 % auf/);
    expect(text).toContain('Gesamtbetrag brutto 200,00 €');
  });

  it('an export to Switzerland (AT § 6 Abs. 1 Z 1 i. V. m. § 7) with the VAT lines at 0 %', async () => {
    const input = withCategories(
      makeDocumentInput({ items: items(['0']), customer: { vatId: null, country: 'CH', address: 'Bahnhofstrasse 1, 8001 Zürich' } }),
      [{ taxCategory: 'export' }],
    );
    const text = flat(allText(await renderInvoicePdf(input)));
    expect(text).toContain('Steuerfreie Ausfuhrlieferung (§ 6 Abs. 1 Z 1 i. V. m. § 7 UStG 1994).');
    expect(text).toContain('Summe USt');
    expect(text).not.toContain('Reverse Charge');
  });
});
