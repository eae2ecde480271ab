import Decimal from 'decimal.js';
import type { InboundLine } from './types';
import { type Numbers, refuse } from './xmlTree';

/**
 * What a line may not say. A negative net price is refused (EN 16931 BR-27). A negative
 * quantity is read: EN 16931 allows it (BT-129, returns and corrections; the official KoSIT,
 * CEN, Peppol and FeRD samples use it, also with a positive line amount when a line allowance
 * is involved), so on an invoice it only warns, for whoever books it to look at.
 */
export function checkLine(line: InboundLine, what: string, kind: 'invoice' | 'creditNote', n: Numbers): void {
  if (line.netPrice !== null && new Decimal(line.netPrice).isNegative() && !new Decimal(line.netPrice).isZero()) {
    refuse(`${what} has a negative net price (${line.netPrice}); EN 16931 BR-27 forbids it`);
  }
  if (kind === 'invoice' && new Decimal(line.quantity).isNegative() && !new Decimal(line.quantity).isZero()) {
    n.warnings.push(`${what} has a negative quantity (${line.quantity}): a return or correction on an invoice`);
  }
}
