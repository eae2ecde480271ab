/**
 * What `POST /api/invoices/:id/send` attaches (docs/e-invoicing.md, "Sending e-invoices"). The
 * values are the document kinds that render them (shared/documents/kinds.ts).
 */
export type EInvoiceFormat = 'pdf' | 'zugferd' | 'xrechnung-ubl' | 'xrechnung-cii' | 'peppol-ubl' | 'ebinterface';
export const EINVOICE_FORMATS: EInvoiceFormat[] = ['pdf', 'zugferd', 'xrechnung-ubl', 'xrechnung-cii', 'peppol-ubl', 'ebinterface'];

/** The e-invoice formats that are an XML file of their own: mailed beside the PDF. */
export const XML_EINVOICE_FORMATS: EInvoiceFormat[] = ['xrechnung-ubl', 'xrechnung-cii', 'peppol-ubl', 'ebinterface'];
export const isXmlEInvoiceFormat = (f: EInvoiceFormat): boolean => XML_EINVOICE_FORMATS.includes(f);

/**
 * Where the chosen format came from: the send request, the customer's `einvoiceFormat`, the
 * tenant's `zugferdByDefault`, or none of them (plain PDF).
 */
export type EmailFormatSource = 'request' | 'customer' | 'tenant' | 'default';
export const EMAIL_FORMAT_SOURCES: EmailFormatSource[] = ['request', 'customer', 'tenant', 'default'];

export interface EmailFormatChoice {
  format: EInvoiceFormat;
  source: EmailFormatSource;
}

/**
 * The format a send attaches: the request's `format` > the customer's `einvoiceFormat` > the
 * tenant's `zugferdByDefault` (zugferd) > pdf. Only sales invoices and credit notes are e-invoices:
 * for any other type (a quote) a customer's or tenant's default does not apply and the plain PDF
 * goes out; a request for an e-invoice format there is refused by the caller (`refusesFormat`).
 */
export function chooseEmailFormat(opts: {
  requested?: EInvoiceFormat | null;
  customerDefault?: EInvoiceFormat | null;
  zugferdByDefault: boolean;
  invoiceType: string;
}): EmailFormatChoice {
  if (opts.requested) return { format: opts.requested, source: 'request' };
  if (!isEInvoiceType(opts.invoiceType)) return { format: 'pdf', source: 'default' };
  if (opts.customerDefault) return { format: opts.customerDefault, source: 'customer' };
  if (opts.zugferdByDefault) return { format: 'zugferd', source: 'tenant' };
  return { format: 'pdf', source: 'default' };
}

/** Our own sales documents, the only ones that are e-invoices. */
export const isEInvoiceType = (type: string): boolean => type === 'rechnung' || type === 'gutschrift';

/**
 * Whether the e-mail job may fall back to the plain PDF when the format cannot be written: only
 * for the tenant's blanket ZUGFeRD default (as before send took a format). A format the user asked
 * for, or the customer's, is checked at send and refused there instead.
 */
export const fallsBackToPdf = (choice: EmailFormatChoice): boolean => choice.source === 'tenant';
