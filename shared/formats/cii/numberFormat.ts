/** How amounts, quantities and prices are written into the e-invoice XML. */
import type Decimal from 'decimal.js';

/**
 * Money with two decimals. A value with more decimals is written as is (never silently
 * rounded), so the rule checks (BR-DEC-*) or the XSD reject it.
 */
export function formatAmount(d: Decimal): string {
  return d.decimalPlaces() <= 2 ? d.toFixed(2) : d.toFixed();
}

/** Quantities, rates and prices without trailing zeros ("2.5", "20"), never in exponent form. */
export function formatDecimal(d: Decimal): string {
  return d.isZero() ? '0' : d.toFixed();
}

/** Unit prices with at least two decimals ("12.50"), more when the price has them. */
export function formatPrice(d: Decimal): string {
  return d.decimalPlaces() < 2 ? d.toFixed(2) : d.toFixed();
}
