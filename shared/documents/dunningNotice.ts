import type { Db } from '../db';
import { loadDunningNotice } from '../queries/dunning';
import { renderDunningNoticePdf } from '../formats/reportPdf/dunningNoticePdf';

/**
 * A dunning notice's PDF, rendered from the content frozen when it was issued (docs/dunning.md):
 * the API's GET /api/dunning-notices/:id/pdf and the notice's e-mail show the same document. A
 * page of text renders in milliseconds, so it is not cached.
 */
export async function dunningNoticeDocument(db: Db, tenantId: string, noticeId: string): Promise<{ filename: string; content: Buffer; contentType: string }> {
  const notice = await loadDunningNotice(db, tenantId, noticeId);
  const content = await renderDunningNoticePdf(notice.content);
  return { filename: `${notice.number.replace(/[^A-Za-z0-9._-]/g, '_')}.pdf`, content, contentType: 'application/pdf' };
}
