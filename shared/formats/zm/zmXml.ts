import { D } from '../../domain/tax/amounts';
import { taxReportError } from '../../domain/tax/errors';
import type { TaxPeriod } from '../../domain/tax/period';
import type { ZmResult } from '../../domain/tax/zm';
import { buildBmfEnvelope } from '../u30/bmfEnvelope';
import { normalizeAtTaxNumber } from '../u30/u30Xml';

/**
 * The Austrian ZM as a FinanzOnline upload file (declaration type U13): one ZM entry per buyer VAT
 * ID and kind, SUM_BGL in whole euros half-up with a sign (corrections may be negative), SOLEI=J
 * for services, DREIECK=J for triangular trade. The BMF XSD for U13 is not among the official
 * files we have, so this follows the BMF's field description (docs/vat-categories.md, "ZM").
 */
export interface ZmXmlInput {
  period: TaxPeriod;
  taxNumber: string;
  zm: ZmResult;
  submittedBy?: string;
  createdAt?: Date;
  packageNumber?: number;
  customerInfo?: string;
}

const wholeEuros = (amount: string) => new D(amount).toDecimalPlaces(0, D.ROUND_HALF_UP);

export function buildZmXml(input: ZmXmlInput): Buffer {
  const fastnr = normalizeAtTaxNumber(input.taxNumber);
  const submitter = input.submittedBy !== undefined ? normalizeAtTaxNumber(input.submittedBy, 'submittedBy') : fastnr;
  const entries: string[] = [];
  for (const line of input.zm.lines) {
    for (const [kind, flag] of [
      ['supplies', ''],
      ['triangular', '\t\t\t<DREIECK>J</DREIECK>\n'],
      ['services', '\t\t\t<SOLEI>J</SOLEI>\n'],
    ] as const) {
      const sum = wholeEuros(line[kind]);
      if (sum.isZero()) continue;
      entries.push(`\t\t<ZM>\n\t\t\t<UID_MS>${line.vatId}</UID_MS>\n\t\t\t<SUM_BGL type="kz">${sum.toFixed(0)}</SUM_BGL>\n${flag}\t\t</ZM>\n`);
    }
  }
  if (entries.length === 0) {
    throw taxReportError('NOTHING_TO_REPORT', 'The period has no intra-Community supplies or services to report: a ZM is not due', [
      { field: 'period', message: 'nothing to report' },
    ]);
  }
  return buildBmfEnvelope({
    art: 'U13',
    period: input.period,
    fastnr,
    submitter,
    packageNumber: input.packageNumber ?? 1,
    createdAt: input.createdAt ?? new Date(),
    customerInfo: input.customerInfo,
    body: entries.join(''),
  });
}
