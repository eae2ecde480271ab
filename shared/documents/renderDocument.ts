import type { DocumentInput } from '../domain/invoiceView';
import type { DocumentKind } from './kinds';
import { renderInvoicePdf } from '../formats/pdf/invoicePdf';
import { buildCiiXml } from '../formats/cii/ciiInvoice';
import { renderZugferdPdf } from '../formats/zugferd/facturx';
import { buildEbInterfaceXml } from '../formats/ebinterface/ebInterfaceInvoice';
import { assertExportable, EInvoiceExportError } from '../formats/cii/einvoiceModel';
import { invalidInput } from '../errors';

/**
 * Documents show the invoice as issued. Payments change neither the content nor the version of a
 * finalized invoice (GoBD / BAO: an issued invoice is not altered), so they are left out of the
 * document — otherwise the cached PDF would show or omit them depending on when it was first
 * rendered. The payment state is in the API (amountPaid, amountDue, payments).
 */
export function asIssued(input: DocumentInput): DocumentInput {
  const { invoice } = input;
  if (!invoice.payments.length && invoice.amountPaid === '0.00') return input;
  return { ...input, invoice: { ...invoice, payments: [], amountPaid: '0.00', amountDue: invoice.status === 'storniert' ? '0.00' : invoice.totalGross } };
}

/** Turn an invoice into the bytes of one document kind. Pure apart from CPU: no I/O. */
export async function renderDocument(kind: DocumentKind, raw: DocumentInput): Promise<Buffer> {
  const input = asIssued(raw);
  switch (kind) {
    case 'pdf':
      return renderInvoicePdf(input);
    case 'zugferd':
      return renderZugferdPdf(input, buildCiiXml(input));
    case 'ebinterface':
      return Buffer.from(buildEbInterfaceXml(input), 'utf8');
  }
}

/**
 * E-invoices (ZUGFeRD, ebInterface) exist only for finalized sales invoices and credit notes:
 * a draft → 400 INVALID_INPUT saying so (decisions.md). The API checks this before queueing.
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
