/**
 * XRechnung 3.0 in the CII syntax: the EN 16931 CII document of ../cii/ciiInvoice.ts with the
 * XRechnung CIUS (profile `xrechnung`), checked against EN 16931 and the BR-DE rules we can break
 * (../cii/rules/xrechnung.ts) before it is returned. A document that would be invalid is refused
 * (EInvoiceExportError listing the rules and what to fill in), never written.
 */
import type { DocumentInput } from '../../domain/invoiceView';
import { renderXml } from '../xml';
import { buildCiiDocument } from '../cii/ciiInvoice';
import { checkCii, checkCiiDocument, checkEn16931Document, section } from '../cii/en16931Rules';
import { toEInvoiceModel } from '../cii/einvoiceModel';
import { EInvoiceExportError } from '../cii/exportError';
import { xrechnungRules } from '../cii/rules/xrechnung';

/** The BR-DE (and Peppol) findings of a CII document; empty when it fulfils them. */
const XRECHNUNG_SECTIONS = [section(xrechnungRules, (inv) => [inv])];

export function checkXRechnungCii(xml: string | Buffer) {
  return checkCii(xml, XRECHNUNG_SECTIONS);
}

/** A finalized sales invoice or credit note as XRechnung 3.0 CII XML; throws EInvoiceExportError when it cannot be one. */
export function buildXRechnungCiiXml(input: DocumentInput): string {
  const model = toEInvoiceModel(input);
  const document = buildCiiDocument(model, 'xrechnung');
  // Checked on the tree about to be written, not on the XML parsed again (../cii/rules/writtenTree.ts).
  const violations = [...checkCiiDocument(document, XRECHNUNG_SECTIONS), ...checkEn16931Document(document)];
  if (violations.length > 0) {
    throw new EInvoiceExportError(`Invoice ${model.number} would not be a valid XRechnung: ${violations.map((v) => v.message).join(' ')}`, violations);
  }
  return renderXml(document);
}
