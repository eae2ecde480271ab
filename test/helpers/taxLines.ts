import type { TaxCategory } from '../../shared/domain/tax/vatCategory';

/** An invoice line of one VAT situation, for report tests that build books by category. */
export type TaxLine = { description: string; quantity: string; unitPrice: string; taxRate: string; taxCategory?: TaxCategory; exemptionReason?: string };

export const taxLine = (unitPrice: string, taxRate: string, taxCategory?: TaxCategory, exemptionReason?: string): TaxLine => ({
  description: `Leistung ${taxCategory ?? taxRate}`,
  quantity: '1',
  unitPrice,
  taxRate,
  ...(taxCategory ? { taxCategory } : {}),
  ...(exemptionReason ? { exemptionReason } : {}),
});
