import { db } from '../../../shared/db';
import { artifactStore } from '../../../shared/documents/artifactStore';
import { renderDocument } from '../../../shared/documents/renderDocument';
import { CONTENT_TYPES, documentFileName, type DocumentKind } from '../../../shared/documents/kinds';
import { loadDocumentSnapshot, SNAPSHOT } from '../../../shared/queries/documentSnapshot';
import { loadMailSender, type Delivery } from '../../../shared/queries/emailDeliveries';
import { EInvoiceExportError } from '../../../shared/formats/cii/einvoiceModel';
import { chooseEmailFormat, fallsBackToPdf, isEInvoiceType, isXmlEInvoiceFormat, type EmailFormatChoice } from '../../../shared/domain/einvoiceFormats';
import { notFound } from '../../../shared/errors';
import { dunningNoticeDocument } from '../../../shared/documents/dunningNotice';
import { logger } from '../../../shared/logger';

export interface PreparedMail {
  attachments: Array<{ filename: string; content: Buffer; contentType: string }>;
  replyTo: string | undefined;
  /** Set when the attachment differs from the tenant's choice (ZUGFeRD impossible → plain PDF). */
  notice: string | null;
}

/**
 * The attachments for the invoice as it is now: content, version and settings from one
 * repeatable-read snapshot, or an edit in between would cache old content under the new version.
 * The format is the one send stored on the delivery (docs/e-invoicing.md, "Sending e-invoices"):
 * - pdf: the PDF;
 * - zugferd: the ZUGFeRD PDF alone (it is a complete PDF); when the invoice cannot be an e-invoice
 *   (e.g. BR-S-02) and the format is only the tenant's default, the plain PDF goes out with a notice;
 * - an XML e-invoice: the PDF (what a person reads) plus the XML as <number>.xml.
 * Every file is the cached artifact of this version or rendered and cached once, so a retry
 * attaches the same bytes. A delivery from before the format was stored takes the tenant setting.
 */
export async function prepareAttachments(
  tenantId: string,
  delivery: Pick<Delivery, 'invoiceId' | 'format' | 'formatSource'> & { dunningNoticeId?: string | null },
): Promise<PreparedMail> {
  const { invoiceId } = delivery;
  if (delivery.dunningNoticeId) {
    // A dunning notice's e-mail carries the notice's PDF, rendered from its frozen content (same bytes on every retry).
    const [pdf, sender] = await Promise.all([dunningNoticeDocument(db(), tenantId, delivery.dunningNoticeId), loadMailSender(db(), tenantId)]);
    return { attachments: [pdf], replyTo: sender.email ?? undefined, notice: null };
  }
  const { snapshot, sender } = await db().transaction(
    async (trx) => ({ snapshot: await loadDocumentSnapshot(trx, tenantId, invoiceId), sender: await loadMailSender(trx, tenantId) }),
    SNAPSHOT,
  );
  if (!snapshot) throw notFound('Invoice');
  const { input, version } = snapshot;

  const artifact = async (kind: DocumentKind) => {
    const key = { tenantId, invoiceId, kind, version };
    let content = await artifactStore.get(key);
    if (!content) {
      content = await renderDocument(kind, input);
      await artifactStore.put(key, content, CONTENT_TYPES[kind]);
    }
    return { filename: documentFileName(kind, input.invoice), content, contentType: CONTENT_TYPES[kind] };
  };

  const einvoiceable = isEInvoiceType(input.invoice.type) && input.invoice.status !== 'entwurf';
  const choice: EmailFormatChoice =
    delivery.format && delivery.formatSource
      ? { format: delivery.format, source: delivery.formatSource }
      : chooseEmailFormat({ zugferdByDefault: sender.zugferdByDefault, invoiceType: input.invoice.type });
  const replyTo = sender.email ?? undefined;
  const format = einvoiceable ? choice.format : 'pdf';

  if (format === 'zugferd') {
    try {
      return { attachments: [await artifact('zugferd')], replyTo, notice: null };
    } catch (err) {
      if (!(err instanceof EInvoiceExportError) || !fallsBackToPdf(choice)) throw err;
      logger.warn({ tenantId, invoiceId, reason: err.message }, 'ZUGFeRD export impossible; e-mailing the plain PDF');
      const notice = `Sent as plain PDF: ZUGFeRD not possible: ${err.message}`.slice(0, 1000);
      return { attachments: [await artifact('pdf')], replyTo, notice };
    }
  }
  const pdf = await artifact('pdf');
  if (!isXmlEInvoiceFormat(format)) return { attachments: [pdf], replyTo, notice: null };
  // XRechnung, Peppol, ebInterface: the readable PDF and the e-invoice the recipient's system books.
  const xml = await artifact(format);
  const number = pdf.filename.replace(/\.pdf$/, '');
  return { attachments: [pdf, { filename: `${number}.xml`, content: xml.content, contentType: 'application/xml' }], replyTo, notice: null };
}
