import { fmtRate } from './money';

/**
 * VAT rates an invoice line may carry, by the tenant's country (docs/money.md): Austria's rates
 * (0, 10, 13, 20) are also the default for other countries; Germany has 0, 7, 19.
 */
const RATES: Record<string, readonly string[]> = {
  AT: ['0', '10', '13', '20'],
  DE: ['0', '7', '19'],
};

export function allowedTaxRates(country: string | null | undefined): readonly string[] {
  return RATES[(country ?? '').toUpperCase()] ?? RATES.AT;
}

/** The canonical rate ("20") when the value is allowed for the country, else null. */
export function normalizeAllowedRate(rate: string, country: string | null | undefined): string | null {
  let canonical: string;
  try {
    canonical = fmtRate(rate);
  } catch {
    return null;
  }
  return allowedTaxRates(country).includes(canonical) ? canonical : null;
}

export const taxRateMessage = (country: string | null | undefined) => `must be one of the allowed tax rates: ${allowedTaxRates(country).join(', ')}`;
