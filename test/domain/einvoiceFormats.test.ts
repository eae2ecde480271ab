import { describe, expect, it } from 'vitest';
import { chooseEmailFormat, fallsBackToPdf, isXmlEInvoiceFormat, EINVOICE_FORMATS } from '../../shared/domain/einvoiceFormats';

describe('chooseEmailFormat: request > customer > tenant ZUGFeRD default > pdf', () => {
  const base = { zugferdByDefault: false, invoiceType: 'rechnung' };

  it('takes the first that is given', () => {
    expect(chooseEmailFormat({ ...base, requested: 'peppol-ubl', customerDefault: 'xrechnung-ubl', zugferdByDefault: true })).toEqual({
      format: 'peppol-ubl',
      source: 'request',
    });
    expect(chooseEmailFormat({ ...base, customerDefault: 'xrechnung-ubl', zugferdByDefault: true })).toEqual({ format: 'xrechnung-ubl', source: 'customer' });
    expect(chooseEmailFormat({ ...base, customerDefault: null, zugferdByDefault: true })).toEqual({ format: 'zugferd', source: 'tenant' });
    expect(chooseEmailFormat(base)).toEqual({ format: 'pdf', source: 'default' });
    // A request for pdf is a choice too: it beats the customer's e-invoice.
    expect(chooseEmailFormat({ ...base, requested: 'pdf', customerDefault: 'ebinterface' })).toEqual({ format: 'pdf', source: 'request' });
  });

  it('a credit note follows the same order; a quote ignores the defaults', () => {
    expect(chooseEmailFormat({ ...base, invoiceType: 'gutschrift', customerDefault: 'xrechnung-cii' }).format).toBe('xrechnung-cii');
    expect(chooseEmailFormat({ invoiceType: 'angebot', customerDefault: 'xrechnung-cii', zugferdByDefault: true })).toEqual({
      format: 'pdf',
      source: 'default',
    });
  });

  it('only the tenant default may fall back to the plain PDF; XML formats are mailed beside the PDF', () => {
    expect(fallsBackToPdf({ format: 'zugferd', source: 'tenant' })).toBe(true);
    expect(fallsBackToPdf({ format: 'zugferd', source: 'customer' })).toBe(false);
    expect(fallsBackToPdf({ format: 'zugferd', source: 'request' })).toBe(false);
    expect(EINVOICE_FORMATS.filter(isXmlEInvoiceFormat)).toEqual(['xrechnung-ubl', 'xrechnung-cii', 'peppol-ubl', 'ebinterface']);
  });
});
