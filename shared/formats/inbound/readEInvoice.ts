/**
 * Reads an incoming e-invoice (UBL 2.1, CII D16B, Factur-X / ZUGFeRD PDF, ebInterface 6.0/6.1)
 * into one normalised model, without touching the database. Hostile or broken input never
 * throws: it comes back as `{ ok: false, reason }`. The format is recognised from the bytes
 * (%PDF- or XML and its root element); the media type only adds a warning when it disagrees.
 * Async because pdf-lib parses PDFs asynchronously. See docs/e-invoicing-inbound.md.
 */
import { readCii } from './cii';
import { readEbInterface } from './ebinterface';
import type { InboundResult } from './types';
import { readUbl } from './ubl';
import { InboundRefusal, Numbers, type ParsedXml, child, parseInboundXml, refuse, text } from './xmlTree';

export type { InboundInvoice, InboundResult } from './types';
export { reconcile } from './reconcile';

const UBL_INVOICE_NS = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2';
const UBL_CREDIT_NOTE_NS = 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2';
const CII_NS = 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100';
const EBINTERFACE_NS = /^http:\/\/www\.ebinterface\.at\/schema\/(\d+)p(\d+)\/?$/;
// Profiles below EN 16931 that carry no invoice lines (Factur-X / ZUGFeRD 2.x MINIMUM and BASIC WL).
const NO_LINE_PROFILES = /:(minimum|basicwl)$/i;
// BT-24 values the reader knows: EN 16931 itself, CIUS/extensions declared after '#', and the
// Factur-X profiles below it. Anything else is read, with a warning.
export const KNOWN_PROFILE = /^(urn:cen\.eu:en16931:2017(#.+)?|urn:factur-x\.eu:1p0:(minimum|basicwl))$/;

function readXml(parsed: ParsedXml, fromPdf: boolean): InboundResult {
  const n = new Numbers();
  const { root, namespace, node } = parsed;
  if ((root === 'Invoice' && namespace === UBL_INVOICE_NS) || (root === 'CreditNote' && namespace === UBL_CREDIT_NOTE_NS)) {
    const invoice = readUbl(node, root, n);
    const profile = text(node, 'CustomizationID');
    return finish({ format: fromPdf ? 'facturx-pdf' : 'ubl', syntax: 'UBL', profile, invoice, warnings: n.warnings, xml: parsed.source });
  }
  if (root === 'CrossIndustryInvoice' && namespace === CII_NS) {
    const invoice = readCii(node, n);
    const profile = text(child(node, 'ExchangedDocumentContext', 'GuidelineSpecifiedDocumentContextParameter'), 'ID');
    return finish({ format: fromPdf ? 'facturx-pdf' : 'cii', syntax: 'CII', profile, invoice, warnings: n.warnings, xml: parsed.source });
  }
  if (root === 'CrossIndustryDocument') {
    return refuse('ZUGFeRD 1.0 (CrossIndustryDocument) is not read; only ZUGFeRD 2.x / Factur-X (CII D16B) is');
  }
  const eb = EBINTERFACE_NS.exec(namespace);
  if (root === 'Invoice' && eb) {
    if (eb[1] !== '6' || (eb[2] !== '0' && eb[2] !== '1')) refuse(`ebInterface ${eb[1]}.${eb[2]} is not read; only 6.0 and 6.1 are`);
    const invoice = readEbInterface(node, n);
    return finish({ format: 'ebinterface', syntax: 'ebInterface', profile: namespace, invoice, warnings: n.warnings, xml: parsed.source });
  }
  return refuse(`unknown root element ${root}${namespace ? ` in namespace ${namespace}` : ''}: not a UBL, CII or ebInterface invoice`);
}

type Read = Omit<Extract<InboundResult, { ok: true }>, 'ok'>;

function finish(result: Read): InboundResult {
  const { profile, invoice, warnings } = result;
  if (result.syntax !== 'ebInterface' && (profile === null || !KNOWN_PROFILE.test(profile))) {
    warnings.push(`the specification identifier (BT-24) ${profile === null ? 'is missing' : `${profile} is not an EN 16931 one`}`);
  }
  if (invoice.lines.length === 0) {
    warnings.push(
      profile && NO_LINE_PROFILES.test(profile)
        ? `profile ${profile} carries no invoice lines: only the header and totals were read`
        : 'the document has no invoice lines (EN 16931 BR-16 requires one)',
    );
  }
  return { ok: true, ...result };
}

/** What the bytes are: a PDF, an XML document, or neither (the upload API asks the same). */
export function sniffEInvoice(bytes: Buffer): 'pdf' | 'xml' | null {
  const head = bytes.subarray(0, 1024).toString('latin1');
  if (head.startsWith('%PDF-')) return 'pdf';
  if (/^(\uFEFF|\xEF\xBB\xBF)?\s*</.test(head)) return 'xml';
  return null;
}

/** Reads an incoming e-invoice; never throws on its content. */
export async function readEInvoice(bytes: Buffer, mediaType: string): Promise<InboundResult> {
  try {
    const kind = sniffEInvoice(bytes);
    if (kind === null) return refuse('the file is neither XML nor PDF');
    const declared = mediaType.toLowerCase().split(';')[0].trim();
    const mismatch = (declared === 'application/pdf') !== (kind === 'pdf') && /pdf|xml/.test(declared);
    let result: InboundResult;
    if (kind === 'pdf') {
      // pdf-lib on first use: most documents are XML, and the web process only sniffs them.
      const { xml } = await (await import('./pdfAttachment')).extractInvoiceXml(bytes);
      result = readXml(parseInboundXml(xml), true);
    } else {
      result = readXml(parseInboundXml(bytes), false);
    }
    if (result.ok && mismatch) result.warnings.push(`declared as ${declared} but the content is ${kind.toUpperCase()}`);
    return result;
  } catch (e) {
    if (e instanceof InboundRefusal) return { ok: false, reason: e.message };
    // Anything else is a parser tripping over hostile input (deep nesting, a malformed PDF object).
    return { ok: false, reason: `the file cannot be read (${e instanceof Error ? e.message.slice(0, 200) : 'unknown error'})` };
  }
}
