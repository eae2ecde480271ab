/** The documents an invoice can be rendered to, and how each is served. */
export type DocumentKind = 'pdf' | 'zugferd' | 'ebinterface' | 'xrechnung-cii' | 'xrechnung-ubl' | 'peppol-ubl';
export const DOCUMENT_KINDS: DocumentKind[] = ['pdf', 'zugferd', 'ebinterface', 'xrechnung-cii', 'xrechnung-ubl', 'peppol-ubl'];

export const CONTENT_TYPES: Record<DocumentKind, string> = {
  pdf: 'application/pdf',
  zugferd: 'application/pdf',
  ebinterface: 'application/xml; charset=utf-8',
  'xrechnung-cii': 'application/xml; charset=utf-8',
  'xrechnung-ubl': 'application/xml; charset=utf-8',
  'peppol-ubl': 'application/xml; charset=utf-8',
};

export function documentFileName(kind: DocumentKind, invoice: { number: string | null; id: string; type: string }): string {
  const base = (invoice.number ?? `ENTWURF-${invoice.id.slice(0, 8)}`).replace(/[^A-Za-z0-9._-]/g, '_');
  if (kind === 'ebinterface') return `${base}.ebinterface.xml`;
  if (kind === 'xrechnung-cii' || kind === 'xrechnung-ubl' || kind === 'peppol-ubl') return `${base}.${kind}.xml`;
  if (kind === 'zugferd') return `${base}.zugferd.pdf`;
  return `${base}.pdf`;
}

/** Job id from the business key: one render per (invoice, kind, version), whatever retries. */
export const renderJobId = (kind: DocumentKind, invoiceId: string, version: number) => `render-${kind}-${invoiceId}-v${version}`;
