import { describe, expect, it } from 'vitest';
import { compareStatedTax, computeTotals } from '../../shared/domain/invoiceTotals';
import { prepareItems } from '../../shared/domain/invoiceChecks';
import { datevPosting } from '../../shared/domain/tax/datevMapping';
import { AppError } from '../../shared/errors';

/**
 * What only a received e-invoice may ask of the invoice rules (docs/e-invoicing-inbound.md,
 * "Booking"): the stated VAT per rate within BR-CO-17's tolerance, and lines of foreign VAT.
 */
const item = (unitPrice: string, taxRate: string, taxCategory: 'standard' | 'foreignVat' | null = null) => ({
  description: 'x',
  quantity: '1',
  unitPrice,
  taxRate,
  taxCategory,
});

describe('stated tax', () => {
  it('applies a difference below 1.00 and refuses 1.00 or more, tax at 0 %, or a rate the lines lack', () => {
    const groups = [
      { taxRate: '19', tax: '757.40' },
      { taxRate: '7', tax: '7.00' },
      { taxRate: '0', tax: '0.00' },
    ];
    expect(compareStatedTax(groups, [{ taxRate: '19.00', tax: '757.41' }])).toEqual({
      applied: [{ taxRate: '19', computed: '757.40', stated: '757.41', difference: '0.01' }],
      refused: [],
    });
    expect(compareStatedTax(groups, [{ taxRate: '19', tax: '756.41' }]).applied).toHaveLength(1);
    expect(compareStatedTax(groups, [{ taxRate: '19', tax: '758.40' }]).refused).toEqual([
      { taxRate: '19', computed: '757.40', stated: '758.40', difference: '1.00' },
    ]);
    expect(compareStatedTax(groups, [{ taxRate: '0', tax: '0.01' }]).refused).toHaveLength(1);
    expect(compareStatedTax(groups, [{ taxRate: '10', tax: '0.50' }]).refused).toHaveLength(1);
    // Two categories of one rate (e.g. S and a second S breakdown) are summed.
    expect(
      compareStatedTax(groups, [
        { taxRate: '7', tax: '3.50' },
        { taxRate: '7', tax: '3.50' },
      ]),
    ).toEqual({ applied: [], refused: [] });
  });

  it('books the stated tax on the group and its largest line, so lines, groups and total agree', () => {
    const t = computeTotals(
      [
        { quantity: '1', unitPrice: '-10.00', taxRate: '19' },
        { quantity: '1', unitPrice: '3996.34', taxRate: '19' },
      ],
      [{ taxRate: '19', tax: '757.41' }],
    );
    expect(t.taxBreakdown).toEqual([{ taxRate: '19', net: '3986.34', tax: '757.41' }]);
    expect(t.lines.map((l) => l.taxAmount)).toEqual(['-1.90', '759.31']);
    expect(t).toMatchObject({ totalTax: '757.41', totalGross: '4743.75', statedTaxApplied: [expect.objectContaining({ difference: '0.01' })] });
    // Without stated tax nothing changes.
    expect(computeTotals([{ quantity: '1', unitPrice: '3986.34', taxRate: '19' }]).totalTax).toBe('757.40');
  });

  it('prepareItems refuses a stated tax beyond the tolerance with BR-CO-17 on statedTax.<rate>', () => {
    const refused = (() => {
      try {
        prepareItems([item('3986.34', '19')], 'DE', undefined, { statedTax: [{ taxRate: '19', tax: '758.40' }] });
      } catch (e) {
        return e as AppError;
      }
    })();
    expect(refused).toBeInstanceOf(AppError);
    expect(refused!.details).toEqual([{ field: 'statedTax.19', message: expect.stringMatching(/^BR-CO-17: .* a difference of 1\.00/) }]);
  });
});

describe('foreign VAT lines', () => {
  it('keep a rate the tenant’s country does not have, only when the import asks', () => {
    const p = prepareItems([item('100.00', '25', 'foreignVat'), item('100.00', '19', 'standard')], 'DE', undefined, { foreignVat: true });
    expect(p.items.map((i) => i.taxCategory)).toEqual(['foreignVat', 'standard']);
    expect(p.totals.taxBreakdown).toEqual([
      { taxRate: '19', net: '100.00', tax: '19.00' },
      { taxRate: '25', net: '100.00', tax: '25.00' },
    ]);
    expect(() => prepareItems([item('100.00', '25', 'foreignVat')], 'DE')).toThrow(AppError);
    expect(() => prepareItems([item('100.00', '100', 'foreignVat')], 'DE', undefined, { foreignVat: true })).toThrow(AppError);
    expect(() => prepareItems([item('100.00', '25')], 'DE', undefined, { foreignVat: true })).toThrow(AppError);
  });

  it('DATEV books their gross on the expense account without a BU key, whatever the rate', () => {
    for (const chart of ['SKR03', 'SKR04', 'EKR'] as const) {
      const p = datevPosting(chart, { kind: 'incomingInvoice', taxRate: '25', gross: '125.00', taxCategory: 'foreignVat' });
      expect(p).toMatchObject({ amount: '125.00', debitCredit: 'H' });
      expect(p).not.toHaveProperty('buKey');
    }
  });
});
