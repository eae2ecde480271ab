import { readEInvoice } from '../formats/inbound/readEInvoice';
import { renderEInvoiceViewPdf } from '../formats/pdf/einvoiceView';

/**
 * The PDF of an incoming invoice imported from an e-invoice: a rendering of the stored original
 * (read again with the reader, so it shows the document, not our booked copy), served as its
 * kind `pdf` (docs/e-invoicing-inbound.md, "The PDF of an imported invoice"). Null when the
 * original no longer reads (the reader grew stricter since the import): the caller renders the
 * booked invoice instead, a page rather than an error.
 */
export async function renderEInvoiceView(original: { bytes: Buffer; mediaType: string; sha256: string }): Promise<Buffer | null> {
  const read = await readEInvoice(original.bytes, original.mediaType);
  if (!read.ok) return null;
  return renderEInvoiceViewPdf(read, { mediaType: original.mediaType, sha256: original.sha256 });
}
