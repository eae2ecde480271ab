import { db } from '../../../shared/db';
import { artifactStore } from '../../../shared/documents/artifactStore';
import { renderDocument } from '../../../shared/documents/renderDocument';
import { CONTENT_TYPES, documentFileName, type DocumentKind } from '../../../shared/documents/kinds';
import { loadDocumentSnapshot, SNAPSHOT } from '../../../shared/queries/documentSnapshot';
import { loadMailSender } from '../../../shared/queries/emailDeliveries';
import { EInvoiceExportError } from '../../../shared/formats/cii/einvoiceModel';
import { notFound } from '../../../shared/errors';
import { logger } from '../../../shared/logger';

export interface PreparedMail {
  attachments: Array<{ filename: string; content: Buffer; contentType: string }>;
  replyTo: string | undefined;
  /** Set when the attachment differs from the tenant's choice (ZUGFeRD impossible → plain PDF). */
  notice: string | null;
}

/**
 * The attachment for the invoice as it is now: content, version and settings from one
 * repeatable-read snapshot, or an edit in between would cache old content under the new version.
 * With zugferdByDefault a ZUGFeRD file replaces the plain PDF (it is a complete PDF); when the
 * invoice cannot be an e-invoice (e.g. BR-S-02) the plain PDF goes out with a notice.
 */
export async function prepareAttachments(tenantId: string, invoiceId: string): Promise<PreparedMail> {
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

  let notice: string | null = null;
  let attachment: PreparedMail['attachments'][number] | null = null;
  const einvoiceable = ['rechnung', 'gutschrift'].includes(input.invoice.type) && input.invoice.status !== 'entwurf';
  if (sender.zugferdByDefault && einvoiceable) {
    try {
      attachment = await artifact('zugferd');
    } catch (err) {
      if (!(err instanceof EInvoiceExportError)) throw err;
      notice = `Sent as plain PDF: ZUGFeRD not possible: ${err.message}`.slice(0, 1000);
      logger.warn({ tenantId, invoiceId, reason: err.message }, 'ZUGFeRD export impossible; e-mailing the plain PDF');
    }
  }
  attachment ??= await artifact('pdf');
  return { attachments: [attachment], replyTo: sender.email ?? undefined, notice };
}
