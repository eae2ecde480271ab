/**
 * renderDocument renders every invoice as issued (asIssued): no payment state reaches a document,
 * and the amounts a cancelled invoice or a Storno credit note was issued with reconcile in the
 * e-invoices. Pure: no server, no database (the API path is in documents.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { asIssued, renderDocument } from '../../../shared/documents/renderDocument';
import type { DocumentInput } from '../../../shared/domain/invoiceView';
import { makeDocumentInput } from '../../formats/pdf/fixtures';
import { CII_XSD, CII_XSD_FILE, EBI_XSD, EBI_XSD_FILE } from '../../formats/cii/fixtures';
import { needsOfficialFiles } from '../../helpers/officialFiles';
import { pdfAttachments, pdfText } from '../../helpers/pdf';
import { validateXml } from '../../helpers/xmllint';

/** rendered() validates both e-invoices against the official XSDs. */
const official = needsOfficialFiles([CII_XSD_FILE, EBI_XSD_FILE]);

const GROSS = '2797.90';
const paidInFull = [{ amount: GROSS, date: '2026-03-20', method: 'paypal' }];
const partly = [{ amount: '500.00', date: '2026-03-15', method: 'bank_transfer' }];

async function rendered(input: DocumentInput) {
  const pdf = await renderDocument('pdf', input);
  const zugferd = await renderDocument('zugferd', input);
  const ebinterface = (await renderDocument('ebinterface', input)).toString('utf8');
  const cii = pdfAttachments(zugferd)['factur-x.xml'].toString('utf8');
  expect(validateXml(cii, CII_XSD).errors).toBe('');
  expect(validateXml(ebinterface, EBI_XSD).errors).toBe('');
  return { pdf: pdfText(pdf), zugferd: pdfText(zugferd), cii, ebinterface };
}

const tag = (xml: string, name: string) => xml.match(new RegExp(`<${name}[^>]*>([^<]*)</${name}>`))?.[1];

describe('asIssued', () => {
  it('payments [], amountPaid 0.00, amountDue = totalGross, paid or partly paid shown as offen; drafts and cancelled keep their status', () => {
    const cases: Array<[DocumentInput, string]> = [
      [makeDocumentInput(), 'offen'],
      [makeDocumentInput({ payments: partly }), 'offen'],
      [makeDocumentInput({ payments: paidInFull }), 'offen'],
      [makeDocumentInput({ invoice: { status: 'storniert', amountDue: '0.00' } }), 'storniert'],
      [makeDocumentInput({ payments: partly, invoice: { status: 'storniert', amountDue: '0.00' } }), 'storniert'],
      [makeDocumentInput({ invoice: { status: 'entwurf', number: null } }), 'entwurf'],
      [makeDocumentInput({ invoice: { type: 'gutschrift', status: 'bezahlt', amountPaid: GROSS, amountDue: '0.00' } }), 'offen'],
      [makeDocumentInput({ invoice: { type: 'eingangsrechnung', status: 'bezahlt', amountPaid: GROSS, amountDue: '0.00' } }), 'offen'],
    ];
    for (const [input, status] of cases) {
      expect(asIssued(input).invoice).toMatchObject({ status, payments: [], amountPaid: '0.00', amountDue: GROSS, totalGross: GROSS });
    }
  });
});

describe('renderDocument shows the invoice as issued', () => {
  it.skipIf(!official)('a paid or partly paid invoice renders exactly as before the payment: the PDF thanks for nothing its XML still asks for', async () => {
    const unpaid = await rendered(makeDocumentInput());
    for (const payments of [partly, paidInFull]) {
      const paid = await rendered(makeDocumentInput({ payments }));
      expect(paid).toEqual(unpaid);
    }
    expect(unpaid.pdf).not.toContain('beglichen');
    expect(unpaid.pdf.replace(/\s+/g, ' ')).toContain('Bitte überweisen Sie 2.797,90 €');
    expect(unpaid.cii).toContain('Zahlbar ohne Abzug bis 24.03.2026.');
    expect(tag(unpaid.cii, 'ram:DuePayableAmount')).toBe(GROSS);
  });

  it.skipIf(!official)(
    'a cancelled invoice as the view returns it (amountDue 0.00) exports: the issued amounts, marked STORNIERT, no payment request in the PDF',
    async () => {
      for (const payments of [[], partly]) {
        const doc = await rendered(makeDocumentInput({ payments, invoice: { status: 'storniert', amountDue: '0.00' } }));
        expect(tag(doc.cii, 'ram:GrandTotalAmount')).toBe(GROSS);
        expect(tag(doc.cii, 'ram:DuePayableAmount')).toBe(GROSS);
        expect(doc.cii).not.toContain('TotalPrepaidAmount');
        expect(tag(doc.ebinterface, 'PayableAmount')).toBe(GROSS);
        expect(doc.ebinterface).not.toContain('PrepaidAmount');
        for (const text of [doc.pdf, doc.zugferd]) {
          expect(text).toMatch(/Rechnung RE-2026-00042\s+STORNIERT/);
          expect(text).not.toMatch(/Bereits bezahlt|Offener Betrag|Zahlungsbedingungen|beglichen/);
        }
      }
    },
  );

  it.skipIf(!official)(
    'the Storno credit note (settled by offset: amountPaid = its open amount, no payment records) shows its full amount; a negative one too',
    async () => {
      const base = { type: 'gutschrift' as const, number: 'GS-2026-00007', relatedInvoiceNumber: 'RE-2026-00042', paymentTermDays: 0 };
      const settled = await rendered(makeDocumentInput({ invoice: { ...base, status: 'bezahlt', amountPaid: GROSS, amountDue: '0.00' } }));
      const refundOwed = await rendered(makeDocumentInput({ invoice: { ...base, status: 'teilbezahlt', amountPaid: '2297.90', amountDue: '500.00' } }));
      expect(refundOwed).toEqual(settled);
      expect(tag(settled.cii, 'ram:TypeCode')).toBe('381');
      expect(tag(settled.cii, 'ram:DuePayableAmount')).toBe(GROSS);
      expect(settled.cii).not.toContain('TotalPrepaidAmount');
      expect(tag(settled.ebinterface, 'PayableAmount')).toBe(GROSS);
      expect(settled.pdf).not.toMatch(/Bereits bezahlt|Offener Betrag|beglichen/);

      // A credit note stored with negative amounts: amountDue = totalGross keeps it reconciling after the flip.
      const negative = makeDocumentInput({
        invoice: { ...base, status: 'bezahlt' },
        items: [{ description: 'Gutschrift Beratung', quantity: '-2', unitPrice: '100.00', taxRate: '20' }],
      });
      negative.invoice.amountPaid = negative.invoice.totalGross;
      negative.invoice.amountDue = '0.00';
      const doc = await rendered(negative);
      expect(tag(doc.cii, 'ram:DuePayableAmount')).toBe('240.00');
      expect(tag(doc.ebinterface, 'PayableAmount')).toBe('240.00');
    },
  );

  it('incoming invoices (paid, cancelled) render as entered, without payment state; drafts keep ENTWURF', async () => {
    const incoming = { type: 'eingangsrechnung' as const, invoiceNumber: 'L-4711', invoiceDate: '2026-03-10' };
    const open = pdfText(await renderDocument('pdf', makeDocumentInput({ invoice: incoming })));
    const paid = pdfText(await renderDocument('pdf', makeDocumentInput({ invoice: incoming, payments: paidInFull })));
    expect(paid).toBe(open);
    expect(paid).not.toMatch(/beglichen|Bereits bezahlt/);
    const voided = pdfText(
      await renderDocument('pdf', makeDocumentInput({ invoice: { ...incoming, status: 'storniert', amountDue: '0.00' }, payments: paidInFull })),
    );
    expect(voided).toContain('STORNIERT');
    expect(voided).not.toMatch(/beglichen|Bereits bezahlt|Offener Betrag/);

    const draft = pdfText(await renderDocument('pdf', makeDocumentInput({ invoice: { status: 'entwurf', number: null } })));
    expect(draft).toContain('ENTWURF');
  });
});
