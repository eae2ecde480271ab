import { describe, expect, it } from 'vitest';
import { reverseCharge, vatIdCountry } from '../../../shared/formats/pdf/legalNotes';
import { makeDocumentInput } from './fixtures';

const zero = [{ description: 'Beratung', quantity: '1', unitPrice: '100.00', taxRate: '0' }];
const twenty = [{ description: 'Lizenz', quantity: '1', unitPrice: '100.00', taxRate: '20' }];

describe('vatIdCountry', () => {
  it('reads the prefix and maps Greece (EL) to GR', () => {
    expect(vatIdCountry('ATU12345678')).toBe('AT');
    expect(vatIdCountry(' de123456789')).toBe('DE');
    expect(vatIdCountry('EL123456789')).toBe('GR');
    expect(vatIdCountry('123')).toBeNull();
    expect(vatIdCountry(null)).toBeNull();
  });
});

describe('reverseCharge', () => {
  it('applies to an EU business in another member state at 0 %', () => {
    expect(reverseCharge(makeDocumentInput({ items: zero }))).toEqual({ applies: true, partial: false });
    expect(reverseCharge(makeDocumentInput({ items: zero, customer: { vatId: 'EL094259216', country: 'GR' } })).applies).toBe(true);
  });

  it('is partial when other lines carry VAT', () => {
    expect(reverseCharge(makeDocumentInput({ items: [...zero, ...twenty] }))).toEqual({ applies: true, partial: true });
  });

  it('compares against the seller country from its VAT ID (a German seller to a German buyer is domestic)', () => {
    const input = makeDocumentInput({ items: zero, seller: { vatId: 'DE811111111', country: 'DE' } });
    expect(reverseCharge(input).applies).toBe(false);
  });

  it('does not apply without 0 % lines, without buyer VAT ID, outside the EU, or to quotes and incoming invoices', () => {
    expect(reverseCharge(makeDocumentInput({ items: twenty })).applies).toBe(false);
    expect(reverseCharge(makeDocumentInput({ items: zero, customer: { vatId: '' } })).applies).toBe(false);
    expect(reverseCharge(makeDocumentInput({ items: zero, customer: { vatId: 'GB123456789', country: 'GB' } })).applies).toBe(false);
    expect(reverseCharge(makeDocumentInput({ items: zero, customer: null })).applies).toBe(false);
    expect(reverseCharge(makeDocumentInput({ items: zero, invoice: { type: 'angebot' } })).applies).toBe(false);
    expect(reverseCharge(makeDocumentInput({ items: zero, invoice: { type: 'eingangsrechnung' } })).applies).toBe(false);
  });

  it('applies to credit notes that reverse a reverse-charge invoice', () => {
    expect(reverseCharge(makeDocumentInput({ items: zero, invoice: { type: 'gutschrift' } })).applies).toBe(true);
  });
});
