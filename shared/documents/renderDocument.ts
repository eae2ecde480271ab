import type { DocumentInput } from '../domain/invoiceView';
import type { DocumentKind } from './kinds';
import { buildCiiXml } from '../formats/cii/ciiInvoice';
import { buildEbInterfaceXml } from '../formats/ebinterface/ebInterfaceInvoice';
import { buildXRechnungCiiXml } from '../formats/xrechnung/xrechnungCii';
import { buildUblXml } from '../formats/ubl/ublInvoice';
import { assertExportable, EInvoiceExportError } from '../formats/cii/einvoiceModel';
import { AppError, invalidInput } from '../errors';

/**
 * Documents show the invoice as issued (GoBD / BAO: not altered): no payments, amountDue =
 * totalGross, so a cached PDF does not depend on when it was rendered and a ZUGFeRD PDF matches
 * its XML; the payment state is in the API. A cancelled invoice keeps its issued amounts, marked
 * STORNIERT (BAO § 132; amountDue 0.00 would break BR-CO-16 / EBI-TOTAL); a Storno credit note
 * shows its full amount, an incoming invoice the supplier's total.
 */
export function asIssued(input: DocumentInput): DocumentInput {
  const { invoice } = input;
  const status = invoice.status === 'bezahlt' || invoice.status === 'teilbezahlt' ? 'offen' : invoice.status;
  return { ...input, invoice: { ...invoice, status, payments: [], amountPaid: '0.00', amountDue: invoice.totalGross } };
}

/**
 * The PDF writers' modules, imported once: an `import()` expression resolves its specifier again
 * on every call (through the loader hooks under tsx), which was ~8 % of a PDF's render CPU in the
 * in-process profile.
 */
let invoicePdf: Promise<typeof import('../formats/pdf/invoicePdf')> | undefined;
let facturx: Promise<typeof import('../formats/zugferd/facturx')> | undefined;
function invoicePdfWriter(): Promise<typeof import('../formats/pdf/invoicePdf')> {
  if (!invoicePdf) invoicePdf = import('../formats/pdf/invoicePdf');
  return invoicePdf;
}
function facturxWriter(): Promise<typeof import('../formats/zugferd/facturx')> {
  if (!facturx) facturx = import('../formats/zugferd/facturx');
  return facturx;
}

/**
 * Turn an invoice into the bytes of one document kind. Pure apart from CPU: no I/O. The PDF
 * writers (pdfkit, fontkit, the fonts) are imported on first use: the web process imports this
 * module for assertEInvoiceWritable and never renders, so it does not carry them (docs/production.md).
 */
export async function renderDocument(kind: DocumentKind, raw: DocumentInput): Promise<Buffer> {
  const input = asIssued(raw);
  switch (kind) {
    case 'pdf':
      return (await invoicePdfWriter()).renderInvoicePdf(input);
    case 'zugferd':
      return (await facturxWriter()).renderZugferdPdf(input, einvoiceXmlOf(kind, input));
    default:
      return Buffer.from(einvoiceXmlOf(kind, input), 'utf8');
  }
}

/**
 * The XML of an e-invoice kind (for ZUGFeRD the CII that goes into the PDF), built and checked by
 * its writer: it throws EInvoiceExportError with the violated rules instead of writing an invalid
 * document. The one way both rendering and the send-time check (`assertEInvoiceWritable`) build it.
 */
function einvoiceXmlOf(kind: Exclude<DocumentKind, 'pdf'>, input: DocumentInput): string {
  switch (kind) {
    case 'zugferd':
      return buildCiiXml(input);
    case 'ebinterface':
      return buildEbInterfaceXml(input);
    case 'xrechnung-cii':
      return buildXRechnungCiiXml(input);
    case 'xrechnung-ubl':
      return buildUblXml(input, { profile: 'xrechnung' });
    case 'peppol-ubl':
      return buildUblXml(input, { profile: 'peppol' });
  }
}

/**
 * Whether the invoice's data makes a valid document of this kind: the same assertRenderable and
 * the same writer with its rule checks as GET …/<kind>, without the PDF (the send command runs it
 * in its transaction, before it commits; building the XML takes milliseconds). Throws the same
 * 400 INVALID_INPUT with `violations` that the GET route answers.
 */
export function assertEInvoiceWritable(kind: DocumentKind, input: DocumentInput): void {
  if (kind === 'pdf') return;
  assertRenderable(kind, input.invoice);
  try {
    einvoiceXmlOf(kind, asIssued(input));
  } catch (err) {
    if (err instanceof EInvoiceExportError) throw refusalError(err.message, err.violations);
    throw err;
  }
}

/**
 * A render job that refuses an e-invoice (EInvoiceExportError: a rule of EN 16931 or § 11 UStG the
 * invoice's data breaks) fails for good, and the refusal reaches the waiting API only as the job's
 * failedReason text: this prefix and the refusal as JSON. The API answers it as 400 INVALID_INPUT
 * with the rule violations (docs/e-invoicing.md), not as a 500: it is the data, not our bug.
 */
const REFUSAL = 'E-invoice refused: ';

export function refusalReason(err: EInvoiceExportError): string {
  return REFUSAL + JSON.stringify({ message: err.message, violations: err.violations });
}

/** The 400 a job's failedReason stands for, or null when it is no e-invoice refusal. */
export function refusalFrom(failedReason: string): AppError | null {
  if (!failedReason.startsWith(REFUSAL)) return null;
  try {
    const { message, violations } = JSON.parse(failedReason.slice(REFUSAL.length)) as { message: string; violations: EInvoiceExportError['violations'] };
    return refusalError(message, violations);
  } catch {
    return null;
  }
}

/** The 400 INVALID_INPUT of a refused e-invoice, `error.violations` listing `{ rule, message }`. */
function refusalError(message: string, violations: EInvoiceExportError['violations']): AppError {
  return new AppError('INVALID_INPUT', 400, message, undefined, undefined, violations.length ? { violations } : undefined);
}

/**
 * E-invoices (ZUGFeRD, ebInterface, XRechnung) exist only for finalized sales invoices and credit notes:
 * a draft → 400 INVALID_INPUT saying so (docs/documents-and-email.md). The API checks this before queueing.
 */
export function assertRenderable(kind: DocumentKind, invoice: DocumentInput['invoice']): void {
  if (kind === 'pdf') return;
  try {
    assertExportable(invoice);
  } catch (err) {
    if (err instanceof EInvoiceExportError) throw invalidInput(err.message);
    throw err;
  }
}
