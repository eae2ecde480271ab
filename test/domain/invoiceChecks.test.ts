import { describe, expect, it } from 'vitest';
import {
  checkExpectedTotal,
  checkNotNegative,
  partyFieldDetails,
  prepareItems,
  relatedInvoiceProblems,
  typeFieldDetails,
} from '../../shared/domain/invoiceChecks';
import type { AppError } from '../../shared/errors';

const errorOf = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (e) {
    return e as AppError;
  }
  throw new Error('expected an error');
};

const item = { description: ' Beratung ', quantity: '2', unit: ' h ', unitPrice: '100.00', taxRate: '20' };

describe('invoice checks (pure)', () => {
  it('prepareItems trims, numbers nothing yet and computes the totals', () => {
    const p = prepareItems([item, { ...item, unit: '', taxRate: '10' }], 'AT');
    expect(p.items).toEqual([
      { description: 'Beratung', unit: 'h', taxCategory: 'standard', exemptionReason: null, exemptionNote: null, taxCategoryGiven: false },
      { description: 'Beratung', unit: null, taxCategory: 'standard', exemptionReason: null, exemptionNote: null, taxCategoryGiven: false },
    ]);
    expect([p.totals.totalNet, p.totals.totalTax, p.totals.totalGross]).toEqual(['400.00', '60.00', '460.00']);
  });

  it('prepareItems names every bad item field at once', () => {
    const e = errorOf(() => prepareItems([{ ...item, taxRate: '7', quantity: '0', description: ' ' }], 'AT'));
    expect(e.code).toBe('INVALID_INPUT');
    expect(e.details?.map((d) => d.field)).toEqual(['items.0.taxRate', 'items.0.quantity', 'items.0.description']);
    expect(errorOf(() => prepareItems([], 'AT')).details).toEqual([{ field: 'items', message: 'must contain at least one item' }]);
  });

  it('totals: the expected total to the cent, no negative invoice unless allowed', () => {
    expect(() => checkExpectedTotal('460', '460.00')).not.toThrow();
    expect(() => checkExpectedTotal(null, '460.00')).not.toThrow();
    expect(errorOf(() => checkExpectedTotal('460.01', '460.00')).status).toBe(422);
    const negative = prepareItems([{ ...item, unitPrice: '-1.00' }], 'AT').totals;
    expect(errorOf(() => checkNotNegative(negative)).status).toBe(422);
    expect(() => checkNotNegative(negative, true)).not.toThrow();
  });

  it('party fields: an incoming invoice names its supplier, every other type a customer', () => {
    expect(partyFieldDetails('eingangsrechnung', {}).map((d) => d.field)).toEqual(['supplierId', 'invoiceNumber', 'invoiceDate']);
    expect(partyFieldDetails('eingangsrechnung', { supplierId: 's', invoiceNumber: 'R-1', invoiceDate: '2026-11-01' })).toEqual([]);
    expect(partyFieldDetails('rechnung', { supplierId: 's' }).map((d) => d.field)).toEqual(['customerId', 'supplierId']);
    expect(partyFieldDetails('angebot', { customerId: 'c' })).toEqual([]);
  });

  it('type fields: details only on quotes, a related invoice only on credit notes unless it is the stored link', () => {
    expect(typeFieldDetails('rechnung', { detailsMarkdown: '# x' }).map((d) => d.field)).toEqual(['detailsMarkdown']);
    expect(typeFieldDetails('angebot', { detailsMarkdown: '# x' })).toEqual([]);
    expect(typeFieldDetails('rechnung', { relatedInvoiceId: 'q' }).map((d) => d.field)).toEqual(['relatedInvoiceId']);
    expect(typeFieldDetails('rechnung', { relatedInvoiceId: 'q' }, 'q')).toEqual([]);
    expect(typeFieldDetails('rechnung', { currency: 'XXX' }).map((d) => d.field)).toEqual(['currency']);
  });

  it('a credit note corrects a finalized rechnung of its customer in its currency', () => {
    const rel = { type: 'rechnung' as const, status: 'offen' as const, customerId: 'c', currency: 'EUR' };
    expect(relatedInvoiceProblems(rel, { customerId: 'c', currency: 'EUR' })).toEqual([]);
    expect(relatedInvoiceProblems({ ...rel, status: 'storniert' }, { customerId: 'c', currency: null })).toEqual([]);
    expect(relatedInvoiceProblems({ ...rel, type: 'angebot' }, { customerId: 'x', currency: 'USD' })).toEqual([
      'must be a sales invoice (rechnung) that the credit note corrects, not a quote (angebot)',
    ]);
    expect(relatedInvoiceProblems({ ...rel, status: 'entwurf' }, { customerId: 'x', currency: 'USD' })).toHaveLength(3);
  });
});
