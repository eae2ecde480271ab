import { beforeAll, describe, expect, it } from 'vitest';
import { PDFParse } from 'pdf-parse';
import { XMLValidator } from 'fast-xml-parser';
import { renderInvoicePdf } from '../../../shared/formats/pdf/invoicePdf';
import { makeDocumentInput, manyItems } from './fixtures';
import { allText, fonts, pageContents, pageCount, pageTexts, pdfInfo, xmpOf } from './pdfTools';

describe('renderInvoicePdf: a regular invoice', () => {
  let pdf: Buffer;
  let text: string;

  beforeAll(async () => {
    pdf = await renderInvoicePdf(
      makeDocumentInput({
        invoice: {
          notes: 'Vielen Dank für Ihren Auftrag!',
          footerText: 'Es gelten unsere Allgemeinen Geschäftsbedingungen.',
          customFields: { Bestellnummer: 'PO-4711' },
        },
      }),
    );
    text = allText(pdf);
  });

  it('is a one-page A4 PDF', () => {
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdfInfo(pdf)).toMatch(/Page size:\s+595\.28 x 841\.89 pts \(A4\)/);
    expect(pageCount(pdf)).toBe(1);
  });

  it('shows the seller with address, VAT ID, tax number and bank data', () => {
    expect(text).toContain('Müller & Söhne Software GmbH');
    expect(text).toContain('Mariahilfer Straße 1');
    expect(text).toContain('1060 Wien');
    expect(text).toContain('UID: ATU12345678');
    expect(text).toContain('Steuernummer: 12 345/6789');
    expect(text).toContain('IBAN: AT61 1904 3002 3457 3201');
    expect(text).toContain('BIC: BKAUATWW');
  });

  it('shows the buyer with company, contact, address and VAT ID', () => {
    expect(text).toMatch(/Beispiel Handels GmbH/);
    expect(text).toMatch(/Erika Mustermann/);
    expect(text).toMatch(/Hauptstraße 5/);
    expect(text).toMatch(/10115 Berlin/);
    expect(text).toContain('UID: DE123456789');
  });

  it('shows title, number and the dates in German format', () => {
    expect(text).toContain('Rechnung RE-2026-00042');
    expect(text).toMatch(/Rechnungsnummer RE-2026-00042/);
    expect(text).toMatch(/Rechnungsdatum 10\.03\.2026/);
    expect(text).toMatch(/Leistungsdatum 05\.03\.2026/);
    expect(text).toMatch(/Fällig am 24\.03\.2026/);
    expect(text).toMatch(/Bestellnummer PO-4711/);
  });

  it('lists the items with quantity, unit, unit price, tax rate and net amount', () => {
    expect(text).toContain('Pos. Beschreibung Menge Einheit Einzelpreis USt % Netto');
    expect(text).toMatch(/^1 Beratung Buchhaltung und 10,5 Std 120,00 € 20 % 1\.260,00 €$/m);
    expect(text).toMatch(/^2 Software-Lizenz \(jährlich\) 1 Stk 990,00 € 20 % 990,00 €$/m);
    expect(text).toMatch(/^3 Fachbuch Umsatzsteuer 2 Stk 44,50 € 10 % 89,00 €$/m);
  });

  it('shows the totals and the tax per rate', () => {
    expect(text).toMatch(/Summe netto 2\.339,00 €/);
    expect(text).toMatch(/USt 20 % auf 2\.250,00 € 450,00 €/);
    expect(text).toMatch(/USt 10 % auf 89,00 € 8,90 €/);
    expect(text).toMatch(/Summe USt 458,90 €/);
    expect(text).toMatch(/Gesamtbetrag brutto 2\.797,90 €/);
    // No payments yet: nothing about paid amounts.
    expect(text).not.toContain('Bereits bezahlt');
  });

  it('states the payment terms with due date and bank account', () => {
    expect(text).toMatch(/Zahlungsziel: 14 Tage, fällig am 24\.03\.2026\./);
    expect(text.replace(/\n/g, ' ')).toMatch(/Bitte überweisen Sie 2\.797,90 € unter Angabe der Rechnungsnummer RE-2026-00042/);
  });

  it('prints notes and footer text, and a page number', () => {
    expect(text).toContain('Vielen Dank für Ihren Auftrag!');
    expect(text).toContain('Es gelten unsere Allgemeinen Geschäftsbedingungen.');
    expect(text).toContain('Seite 1 von 1');
    expect(text).not.toContain('ENTWURF');
  });

  it('embeds only DejaVu TrueType subsets (no standard fonts)', () => {
    const list = fonts(pdf);
    expect(list.length).toBeGreaterThan(0);
    for (const f of list) {
      expect(f.embedded).toBe(true);
      expect(f.name).toMatch(/^[A-Z]{6}\+DejaVuSans/);
    }
  });

  it('is byte-for-byte reproducible and dated from invoice.updatedAt', async () => {
    const again = await renderInvoicePdf(
      makeDocumentInput({
        invoice: {
          notes: 'Vielen Dank für Ihren Auftrag!',
          footerText: 'Es gelten unsere Allgemeinen Geschäftsbedingungen.',
          customFields: { Bestellnummer: 'PO-4711' },
        },
      }),
    );
    expect(again.equals(pdf)).toBe(true);
    expect(pdfInfo(pdf, '-isodates')).toMatch(/CreationDate:\s+2026-03-10T08:15:00/);
    expect(pdfInfo(pdf)).toMatch(/Title:\s+Rechnung RE-2026-00042/);
  });
});

describe('renderInvoicePdf: states and document types', () => {
  it('marks drafts as ENTWURF and prints no number', async () => {
    const pdf = await renderInvoicePdf(makeDocumentInput({ invoice: { status: 'entwurf', number: null, sentAt: null } }));
    const text = allText(pdf);
    expect(text).toMatch(/Rechnung\s+ENTWURF/);
    expect(text).toMatch(/Rechnungsnummer wird bei Versand vergeben/);
    expect(text).not.toContain('RE-2026');
    expect(text).toContain('ENTWURF · Seite 1 von 1');
    // The watermark is a vector shape: it must not break up the text of the rows beneath it.
    expect(text).toMatch(/^2 Software-Lizenz \(jährlich\) 1 Stk 990,00 € 20 % 990,00 €$/m);
    expect(text).toMatch(/Gesamtbetrag brutto 2\.797,90 €/);
    expect(pdfInfo(pdf)).toMatch(/Title:\s+Rechnung \(ENTWURF\)/);
  });

  it('puts the draft watermark on every page of a long draft', async () => {
    const pdf = await renderInvoicePdf(makeDocumentInput({ invoice: { status: 'entwurf', number: null }, items: manyItems(80) }));
    const pages = pageTexts(pdf);
    expect(pages.length).toBeGreaterThan(1);
    for (const [i, page] of pages.entries()) expect(page).toContain(`ENTWURF · Seite ${i + 1} von ${pages.length}`);
    // The watermark is drawn on every page as a filled path in the watermark grey (#e4e4e4).
    const contents = await pageContents(pdf);
    expect(contents).toHaveLength(pages.length);
    for (const ops of contents) expect(ops).toMatch(/0\.894\d* 0\.894\d* 0\.894\d* scn/);
    const final = await pageContents(await renderInvoicePdf(makeDocumentInput({ items: manyItems(80) })));
    for (const ops of final) expect(ops).not.toMatch(/0\.894\d* 0\.894\d* 0\.894\d* scn/);
  });

  it('marks cancelled invoices', async () => {
    const text = allText(await renderInvoicePdf(makeDocumentInput({ invoice: { status: 'storniert' } })));
    expect(text).toMatch(/Rechnung RE-2026-00042\s+STORNIERT/);
    expect(text).not.toContain('Zahlungsziel');
  });

  it('shows payments received and the amount still due', async () => {
    const input = makeDocumentInput({ payments: [{ amount: '500.00', date: '2026-03-15', method: 'bank_transfer' }] });
    expect(input.invoice.status).toBe('teilbezahlt');
    const text = allText(await renderInvoicePdf(input));
    expect(text).toMatch(/Bereits bezahlt -500,00 €/);
    expect(text).toMatch(/Offener Betrag 2\.297,90 €/);
    expect(text).toMatch(/Zahlungseingänge\n15\.03\.2026 Überweisung: 500,00 €/);
    expect(text.replace(/\n/g, ' ')).toMatch(/Bitte überweisen Sie 2\.297,90 €/);
  });

  it('thanks instead of asking for payment when fully paid', async () => {
    const input = makeDocumentInput({ payments: [{ amount: '2797.90', date: '2026-03-20', method: 'paypal' }] });
    expect(input.invoice.status).toBe('bezahlt');
    const text = allText(await renderInvoicePdf(input));
    expect(text).toMatch(/Offener Betrag 0,00 €/);
    expect(text).toContain('Der Rechnungsbetrag ist vollständig beglichen.');
    expect(text).not.toContain('Bitte überweisen');
  });

  it('falls back to the issue date for the service date and derives the due date from the term', async () => {
    const text = allText(
      await renderInvoicePdf(makeDocumentInput({ invoice: { serviceDate: null, dueDate: null, issueDate: '2026-01-25', paymentTermDays: 10 } })),
    );
    expect(text).toMatch(/Leistungsdatum 25\.01\.2026/);
    expect(text).toMatch(/Fällig am 04\.02\.2026/);
    expect(text).toMatch(/Zahlungsziel: 10 Tage, fällig am 04\.02\.2026/);
  });

  it('states a service period as Leistungszeitraum instead of a single Leistungsdatum', async () => {
    const text = allText(await renderInvoicePdf(makeDocumentInput({ invoice: { serviceDate: '2026-03-01', serviceEndDate: '2026-03-31' } })));
    expect(text).toMatch(/Leistungszeitraum 01\.03\.2026 – 31\.03\.2026/);
    expect(text).not.toContain('Leistungsdatum');
  });

  it('says "Zahlbar sofort" for a zero-day term', async () => {
    const text = allText(await renderInvoicePdf(makeDocumentInput({ invoice: { paymentTermDays: 0, dueDate: '2026-03-10' } })));
    expect(text).toContain('Zahlbar sofort ohne Abzug.');
  });

  it('references the reversed invoice on a credit note', async () => {
    const text = allText(
      await renderInvoicePdf(
        makeDocumentInput({
          invoice: { type: 'gutschrift', number: 'GS-2026-00003', relatedInvoiceId: 'x', relatedInvoiceNumber: 'RE-2026-00042' },
        }),
      ),
    );
    expect(text).toContain('Gutschrift GS-2026-00003');
    expect(text).toMatch(/Gutschriftsnummer GS-2026-00003/);
    expect(text).toMatch(/Zu Rechnung RE-2026-00042/);
    expect(text).toContain('Gutschrift (Rechnungskorrektur) zur Rechnung Nr. RE-2026-00042');
    expect(text).not.toContain('Zahlungsziel');
  });

  it('titles quotes as Angebot with validity instead of service and due date', async () => {
    const text = allText(await renderInvoicePdf(makeDocumentInput({ invoice: { type: 'angebot', number: 'AN-2026-00007', dueDate: '2026-04-30' } })));
    expect(text).toContain('Angebot AN-2026-00007');
    expect(text).toMatch(/Angebotsdatum 10\.03\.2026/);
    expect(text).toMatch(/Gültig bis 30\.04\.2026/);
    expect(text).not.toContain('Leistungsdatum');
    expect(text).toContain('Dieses Angebot ist gültig bis 30.04.2026.');
  });

  it('titles incoming invoices with the supplier number and date', async () => {
    const text = allText(
      await renderInvoicePdf(
        makeDocumentInput({
          invoice: {
            type: 'eingangsrechnung',
            number: null,
            invoiceNumber: 'pi_3NxYz',
            invoiceDate: '2026-02-14',
            source: 'stripe',
            externalId: 'evt_123',
          },
        }),
      ),
    );
    expect(text).toContain('Eingangsrechnung pi_3NxYz');
    expect(text).toMatch(/Rechnungsdatum 14\.02\.2026/);
    expect(text).toMatch(/Quelle stripe/);
    expect(text).toContain('Lieferant');
  });

  it('renders without a customer', async () => {
    const text = allText(await renderInvoicePdf(makeDocumentInput({ customer: null })));
    expect(text).toContain('Rechnung RE-2026-00042');
    expect(text).not.toContain('Beispiel Handels GmbH');
    expect(text).toMatch(/Gesamtbetrag brutto 2\.797,90 €/);
  });

  it('prints other currencies by code', async () => {
    const text = allText(await renderInvoicePdf(makeDocumentInput({ invoice: { currency: 'CHF' } })));
    expect(text).toMatch(/Gesamtbetrag brutto 2\.797,90 CHF/);
    expect(text).not.toMatch(/\d €/);
  });
});

describe('renderInvoicePdf: reverse charge', () => {
  const rcItems = [{ description: 'IT-Beratung', quantity: '3', unit: 'Std', unitPrice: '100.00', taxRate: '0' }];
  const NOTE = 'Steuerschuldnerschaft des Leistungsempfängers / Reverse Charge';

  it('prints the note for an EU business customer from another country at 0 %', async () => {
    const text = allText(await renderInvoicePdf(makeDocumentInput({ items: rcItems })));
    expect(text).toContain(NOTE);
    expect(text.replace(/\n/g, ' ')).toContain('UID des Leistungsempfängers: DE123456789');
    expect(text).toContain('UID: ATU12345678');
    expect(text).toMatch(/USt 0 % auf 300,00 € 0,00 €/);
  });

  it('names the 0 % lines when only some lines are reverse charge', async () => {
    const text = allText(
      await renderInvoicePdf(makeDocumentInput({ items: [...rcItems, { description: 'Fachbuch', quantity: '1', unitPrice: '30.00', taxRate: '10' }] })),
    );
    expect(text).toContain(NOTE);
    expect(text).toContain('Für die mit 0 % ausgewiesenen Positionen');
  });

  it('is absent for a domestic customer, a customer without VAT ID, a non-EU customer, or taxed lines', async () => {
    const cases = [
      makeDocumentInput({ items: rcItems, customer: { vatId: 'ATU99999999', country: 'AT' } }),
      makeDocumentInput({ items: rcItems, customer: { vatId: null } }),
      makeDocumentInput({ items: rcItems, customer: { vatId: 'CHE-123.456.789', country: 'CH' } }),
      makeDocumentInput(),
    ];
    for (const input of cases) {
      const text = allText(await renderInvoicePdf(input));
      expect(text).toContain('Gesamtbetrag brutto');
      expect(text).not.toContain('Reverse Charge');
    }
  });
});

describe('renderInvoicePdf: German characters (golden)', () => {
  const GOLDEN = 'Größenänderung Übergabe Ölpreis Äpfel – Maß für Straße: 12 € äöüÄÖÜß';
  const ITEM = 'Maßanfertigung Übergröße äöü ß';

  it('survives text extraction with poppler and pdf.js', async () => {
    const pdf = await renderInvoicePdf(
      makeDocumentInput({
        seller: { name: 'Bäckerei Öztürk & Söhne GmbH', address: 'Fußgängerzone 3\n8010 Graz' },
        customer: { company: 'Ärztezentrum Überlingen', name: 'Jürgen Weiß' },
        items: [{ description: ITEM, quantity: '1', unit: 'Stück', unitPrice: '12.00', taxRate: '20' }],
        invoice: { notes: GOLDEN },
      }),
    );
    const poppler = allText(pdf);
    expect(poppler).toMatch(new RegExp(`^1 ${ITEM} 1 Stück 12,00 € 20 % 12,00 €$`, 'm'));
    for (const s of [GOLDEN, 'Bäckerei Öztürk & Söhne GmbH', 'Fußgängerzone 3', 'Ärztezentrum Überlingen', 'Jürgen Weiß']) {
      expect(poppler).toContain(s);
    }

    const parser = new PDFParse({ data: new Uint8Array(pdf) });
    try {
      const result = await parser.getText();
      const pdfjs = result.text.replace(/[ \t]+/g, ' ');
      expect(pdfjs).toContain(GOLDEN);
      expect(pdfjs).toContain(ITEM);
      expect(pdfjs).toContain('Jürgen Weiß');
      expect(pdfjs).toContain('14,40 €');
    } finally {
      await parser.destroy();
    }
  });
});

describe('renderInvoicePdf: 200 items', () => {
  let pages: string[];
  let pdf: Buffer;

  beforeAll(async () => {
    pdf = await renderInvoicePdf(makeDocumentInput({ items: manyItems(200) }));
    pages = pageTexts(pdf);
  });

  it('spreads over several pages with "Seite X von Y" on each', () => {
    expect(pageCount(pdf)).toBe(pages.length);
    expect(pages.length).toBeGreaterThanOrEqual(4);
    for (const [i, page] of pages.entries()) expect(page).toContain(`Seite ${i + 1} von ${pages.length}`);
  });

  it('repeats the table header on every page that has items', () => {
    const header = 'Pos. Beschreibung Menge Einheit Einzelpreis USt % Netto';
    const withItems = pages.filter((p) => /^\d+ Position \d+:/m.test(p));
    expect(withItems.length).toBeGreaterThanOrEqual(4);
    for (const page of withItems) expect(page).toContain(header);
  });

  it('contains all 200 positions exactly once and in order', () => {
    const positions = pages.flatMap((p) => [...p.matchAll(/^(\d+) Position (\d+):/gm)].map((m) => [Number(m[1]), Number(m[2])]));
    expect(positions).toHaveLength(200);
    positions.forEach(([pos, label], i) => {
      expect(pos).toBe(i + 1);
      expect(label).toBe(i + 1);
    });
  });

  it('identifies follow-up pages and ends with the totals', () => {
    for (const page of pages.slice(1)) expect(page).toContain('Rechnung RE-2026-00042 vom 10.03.2026');
    const last = pages[pages.length - 1];
    expect(last).toMatch(/Gesamtbetrag brutto [\d.]+,\d\d €/);
  });

  it('splits a description longer than a page, keeping amounts once and the header on each page', async () => {
    const long = Array.from({ length: 900 }, (_, i) => `wort${i + 1}`).join(' ');
    const input = makeDocumentInput({
      items: [
        { description: 'kurz', quantity: '1', unitPrice: '1.00', taxRate: '20' },
        { description: long, quantity: '3', unitPrice: '7.77', taxRate: '20' },
        { description: 'danach', quantity: '1', unitPrice: '1.00', taxRate: '20' },
      ],
      // No IBAN, so no EPC QR code: it would take a page of its own here, one without the table header.
      seller: { iban: null },
    });
    const pdf = await renderInvoicePdf(input);
    const pages = pageTexts(pdf);
    expect(pages.length).toBeGreaterThan(2);
    for (const page of pages) expect(page).toContain('Pos. Beschreibung Menge Einheit Einzelpreis USt % Netto');
    const words = pages.join('\n').match(/wort\d+/g)!;
    expect(words).toEqual(Array.from({ length: 900 }, (_, i) => `wort${i + 1}`));
    expect(allText(pdf).match(/23,31 €/g)).toHaveLength(1);
    expect(pages[pages.length - 1]).toMatch(/^3 danach 1 1,00 € 20 % 1,00 €$/m);
  });

  it('renders items in position order even when given out of order', async () => {
    const input = makeDocumentInput();
    input.invoice.items = [...input.invoice.items].reverse();
    const text = allText(await renderInvoicePdf(input));
    const order = [...text.matchAll(/^(\d) (Beratung|Software|Fachbuch)/gm)].map((m) => m[1]);
    expect(order).toEqual(['1', '2', '3']);
  });
});

describe('renderInvoicePdf: quote with Markdown details', () => {
  const MD = [
    '# Leistungsbeschreibung',
    '',
    'Wir liefern **Einrichtung** und *Schulung* inklusive `REST-API`.',
    '',
    '## Umfang',
    '',
    '- Datenübernahme aus dem Altsystem',
    '- Schulung der Mitarbeiter',
    '  - Grundlagen der Belegerfassung',
    '',
    '1. Analysephase',
    '2. Umsetzungsphase',
    '',
    '### Zeitplan',
    '',
    '| Phase | Dauer | Kosten |',
    '|---|---|--:|',
    '| Analyse | 2 Wochen | 3.000,00 € |',
    '| Umsetzung | 6 Wochen | 12.000,00 € |',
    '',
    '> Alle Preise netto.',
  ].join('\n');

  it('appends the details as extra pages after the quote', async () => {
    const base = makeDocumentInput({ invoice: { type: 'angebot', number: 'AN-2026-00007' } });
    const withDetails = makeDocumentInput({ invoice: { type: 'angebot', number: 'AN-2026-00007', detailsMarkdown: MD } });
    const plainPages = pageCount(await renderInvoicePdf(base));
    const pdf = await renderInvoicePdf(withDetails);
    const pages = pageTexts(pdf);
    expect(pages.length).toBe(plainPages + 1);

    // Page 1 is the quote itself; the details start on a page of their own.
    expect(pages[0]).toContain('Angebot AN-2026-00007');
    expect(pages[0]).toContain('Gesamtbetrag brutto 2.797,90 €');
    expect(pages[0]).not.toContain('Leistungsbeschreibung\n');
    const details = pages.slice(1).join('\n');
    expect(details).toContain('Anlage zu: Angebot AN-2026-00007');
    expect(details).toContain('Leistungsbeschreibung');
    expect(details).toContain('Wir liefern Einrichtung und Schulung inklusive REST-API.');
    expect(details).toMatch(/• Datenübernahme aus dem Altsystem/);
    expect(details).toMatch(/• Grundlagen der Belegerfassung/);
    expect(details).toMatch(/1\. Analysephase\n2\. Umsetzungsphase/);
    expect(details).toMatch(/Phase Dauer Kosten/);
    expect(details).toMatch(/Umsetzung 6 Wochen 12\.000,00 €/);
    expect(details).toContain('Alle Preise netto.');
    expect(details).toContain(`Seite ${pages.length} von ${pages.length}`);
  });

  it('ignores detailsMarkdown on document types other than quotes', async () => {
    const pdf = await renderInvoicePdf(makeDocumentInput({ invoice: { detailsMarkdown: MD } }));
    expect(pageCount(pdf)).toBe(1);
    expect(allText(pdf)).not.toContain('Leistungsbeschreibung');
  });
});

describe('renderInvoicePdf: PDF/A-3b', () => {
  let pdf: Buffer;

  beforeAll(async () => {
    pdf = await renderInvoicePdf(makeDocumentInput(), { pdfA: true });
  });

  it('declares PDF/A-3B in well-formed XMP that matches the info dictionary', () => {
    const xmp = xmpOf(pdf);
    expect(XMLValidator.validate(xmp)).toBe(true);
    expect(xmp).toContain('<pdfaid:part>3</pdfaid:part>');
    expect(xmp).toContain('<pdfaid:conformance>B</pdfaid:conformance>');
    expect(xmp).toContain('<rdf:li xml:lang="x-default">Rechnung RE-2026-00042</rdf:li>');
    // "&" in the seller name is escaped in XMP, plain in the info dictionary.
    expect(xmp).toContain('Müller &amp; Söhne Software GmbH');
    expect(pdfInfo(pdf)).toMatch(/Author:\s+Müller & Söhne Software GmbH/);
    expect(xmp).toContain('<xmp:CreateDate>2026-03-10T08:15:00Z</xmp:CreateDate>');
  });

  it('is PDF 1.7 with an sRGB output intent, a file ID and only embedded fonts', () => {
    expect(pdf.subarray(0, 8).toString('latin1')).toBe('%PDF-1.7');
    const raw = pdf.toString('latin1');
    expect(raw).toMatch(/\/OutputIntents\s*\[/);
    expect(raw).toContain('/GTS_PDFA1');
    expect(raw).toMatch(/\/ID\s*\[\s*<[0-9a-fA-F]{32}>/);
    expect(raw).not.toMatch(/\/BaseFont\s*\/Helvetica/);
    for (const f of fonts(pdf)) expect(f.embedded).toBe(true);
  });

  it('still shows the same invoice', () => {
    const text = allText(pdf);
    expect(text).toContain('Rechnung RE-2026-00042');
    expect(text).toMatch(/Gesamtbetrag brutto 2\.797,90 €/);
  });
});
