import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Decimal from 'decimal.js';
import fc from 'fast-check';
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import type { DocumentInput } from '../../../shared/domain/invoiceView';
import { EInvoiceExportError } from '../../../shared/formats/cii/einvoiceModel';
import { buildEbInterfaceXml, EBINTERFACE_61_NAMESPACE } from '../../../shared/formats/ebinterface/ebInterfaceInvoice';
import { validateXml } from '../../helpers/xmllint';
import { needsOfficialFiles } from '../../helpers/officialFiles';
import {
  customerAT,
  customerDE,
  customerPrivate,
  documentArb,
  EBI_SAMPLES,
  EBI_SAMPLES_FOLDER,
  EBI_XSD,
  EBI_XSD_FILE,
  makeDocument,
  mixedItemsAT,
  mixedItemsDE,
  negateAmounts,
  sellerAT,
  sellerDE,
} from '../cii/fixtures';

const official = needsOfficialFiles([EBI_XSD_FILE, EBI_SAMPLES_FOLDER]);

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseTagValue: false });
type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const parse = (xml: string): Any => parser.parse(xml).Invoice;
const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

function expectValid(xml: string): void {
  expect(validateXml(xml, EBI_XSD)).toEqual({ valid: true, errors: '' });
}

function exportError(fn: () => unknown): EInvoiceExportError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(EInvoiceExportError);
    return e as EInvoiceExportError;
  }
  throw new Error('expected an EInvoiceExportError');
}

const special = 'Wartung & Support <Premium> für "Müller & Söhne" – O\'Brien; Äöü ß € 😀\n2. Zeile ]]> &amp;';

const zeroRated = [{ description: 'Beratung (Kleinunternehmer)', quantity: '2', unitPrice: '100.00', taxRate: '0', unit: 'Std' }];
// 8333.33 + 20 % (1666.67) = 10000.00 gross, exactly the § 11 limit; one cent more is above it.
const atLimit = [{ description: 'Projektpauschale', quantity: '1', unitPrice: '8333.33', taxRate: '20' }];
const overLimit = [{ description: 'Projektpauschale', quantity: '1', unitPrice: '8333.34', taxRate: '20' }];
const customerATNoUid = { ...customerAT, vatId: null };

const rules = (fn: () => unknown) => exportError(fn).violations.map((v) => v.rule);

const reverseCharge = makeDocument(sellerAT, customerDE, {
  itemSpecs: [{ description: 'Implementierung', quantity: '40', unitPrice: '110.00', taxRate: '0', unit: 'Std' }],
});

const scenarios: Array<[string, DocumentInput]> = [
  ['AT seller, mixed rates 20/10/13', makeDocument(sellerAT, customerAT, { itemSpecs: mixedItemsAT })],
  ['DE seller, mixed rates 19/7', makeDocument(sellerDE, customerDE, { itemSpecs: mixedItemsDE })],
  ['reverse charge AT → DE', reverseCharge],
  [
    'credit note (negative reversal)',
    negateAmounts(
      makeDocument(sellerAT, customerAT, { type: 'gutschrift', number: 'GS-2026-00001', relatedInvoiceNumber: 'RE-2026-00001', itemSpecs: mixedItemsAT }),
    ),
  ],
  ['credit note (positive)', makeDocument(sellerDE, customerDE, { type: 'gutschrift', number: 'GS-2026-00002', itemSpecs: mixedItemsDE })],
  ['partially paid, private customer', makeDocument(sellerAT, customerPrivate, { itemSpecs: mixedItemsAT, paid: '123.45' })],
  ['fully paid', makeDocument(sellerAT, customerAT, { paid: '240.00', status: 'bezahlt' })],
  [
    'special characters',
    makeDocument(
      sellerAT,
      { ...customerAT, company: 'Müller & Söhne <KG>' },
      {
        itemSpecs: [
          { description: special, quantity: '0.0001', unitPrice: '12345.67', taxRate: '20', unit: 'Stk' },
          { description: 'Rabatt "Treue"', quantity: '1', unitPrice: '-5.00', taxRate: '20' },
        ],
        notes: 'Danke & <b>Tschüss</b>',
      },
    ),
  ],
  // A seller without UID may only export when it charges no VAT (e.g. a Kleinunternehmer).
  ['seller without IBAN and VAT id, no VAT charged', makeDocument({ ...sellerAT, iban: null, bic: null, vatId: null }, customerAT, { itemSpecs: zeroRated })],
  ['no service date', makeDocument(sellerAT, customerAT, { serviceDate: null })],
  ['service period', makeDocument(sellerAT, customerAT, { serviceDate: '2026-03-01', serviceEndDate: '2026-03-31' })],
  ['buyer reference (BT-10) and order reference (BT-13)', makeDocument(sellerAT, customerAT, { buyerReference: 'Abteilung IT/3', orderReference: 'PO-4711' })],
];

describe('buildEbInterfaceXml', () => {
  it.skipIf(!official).each(scenarios)('%s: valid against the ebInterface 6.1 XSD', (_name, input) => {
    expectValid(buildEbInterfaceXml(input));
  });

  it('writes an Invoice with biller, recipient, lines, tax summary, payment and due date', () => {
    const input = makeDocument(sellerAT, customerAT, { itemSpecs: mixedItemsAT });
    const inv = parse(buildEbInterfaceXml(input));
    expect(inv['@_xmlns']).toBe(EBINTERFACE_61_NAMESPACE);
    expect(inv['@_DocumentType']).toBe('Invoice');
    expect(inv['@_InvoiceCurrency']).toBe('EUR');
    expect(inv.InvoiceNumber).toBe('RE-2026-00001');
    expect(inv.InvoiceDate).toBe('2026-03-10');
    expect(inv.Delivery.Date).toBe('2026-03-05');
    expect(inv.Biller.VATIdentificationNumber).toBe('ATU12345678');
    expect(inv.Biller.Address).toMatchObject({
      Name: 'Huber Software GmbH',
      Street: 'Mariahilfer Straße 12/3',
      Town: 'Wien',
      ZIP: '1060',
      Country: { '#text': 'Österreich', '@_CountryCode': 'AT' },
      Email: 'office@huber-software.at',
    });
    expect(inv.Biller.Contact).toEqual({ Name: 'Maria Huber', Email: 'office@huber-software.at' });
    expect(inv.InvoiceRecipient.VATIdentificationNumber).toBe('ATU87654321');
    expect(inv.InvoiceRecipient.Address).toMatchObject({ Name: 'Berger Bau GmbH', Street: 'Hauptplatz 1', Town: 'Graz', ZIP: '8010' });
    const lines = asArray(inv.Details.ItemList.ListLineItem) as Any[];
    expect(lines.map((l) => [l.PositionNumber, l.Quantity['@_Unit'], l.TaxItem.TaxPercent['@_TaxCategoryCode'], l.TaxItem.TaxPercent['#text']])).toEqual([
      ['1', 'HUR', 'S', '20'],
      ['2', 'H87', 'S', '10'],
      ['3', 'LS', 'S', '13'],
      ['4', 'KMT', 'S', '20'],
    ]);
    expect(lines[0]).toMatchObject({ UnitPrice: '95.00', LineItemAmount: '1187.50', Quantity: { '#text': '12.5' } });
    const taxes = asArray(inv.Tax.TaxItem) as Any[];
    expect(taxes.map((t) => [t.TaxableAmount, t.TaxPercent['#text'], t.TaxAmount])).toEqual(input.invoice.taxBreakdown.map((g) => [g.net, g.taxRate, g.tax]));
    expect(inv.TotalGrossAmount).toBe(input.invoice.totalGross);
    expect(inv.PayableAmount).toBe(input.invoice.amountDue);
    expect(inv.PaymentMethod.UniversalBankTransaction.BeneficiaryAccount).toEqual({
      BIC: 'BKAUATWW',
      IBAN: 'AT611904300234573201',
      BankAccountOwner: 'Huber Software GmbH',
    });
    expect(inv.PaymentConditions.DueDate).toBe('2026-03-24');
  });

  it("writes the order reference (BT-13) as the recipient's OrderReference/OrderID and the buyer reference (BT-10) as its SubOrganizationID", () => {
    const withRefs = parse(buildEbInterfaceXml(makeDocument(sellerAT, customerAT, { buyerReference: 'Abteilung IT/3', orderReference: 'PO-4711' })));
    expect(withRefs.InvoiceRecipient.OrderReference).toEqual({ OrderID: 'PO-4711' });
    expect(withRefs.InvoiceRecipient.SubOrganizationID).toBe('Abteilung IT/3');
    // The customer's buyer reference is the default, as in CII and UBL.
    const fromCustomer = parse(buildEbInterfaceXml(makeDocument(sellerAT, { ...customerAT, buyerReference: 'Kostenstelle 12' })));
    expect(fromCustomer.InvoiceRecipient.SubOrganizationID).toBe('Kostenstelle 12');
    expect(fromCustomer.InvoiceRecipient.OrderReference).toBeUndefined();
    const without = parse(buildEbInterfaceXml(makeDocument(sellerAT, customerAT)));
    expect(without.InvoiceRecipient.OrderReference).toBeUndefined();
    expect(without.InvoiceRecipient.SubOrganizationID).toBeUndefined();
  });

  it('uses 00000000 for a recipient without VAT id and omits the payment account when there is none', () => {
    const inv = parse(buildEbInterfaceXml(makeDocument({ ...sellerAT, iban: null }, customerPrivate)));
    expect(inv.InvoiceRecipient.VATIdentificationNumber).toBe('00000000');
    expect(inv.InvoiceRecipient.Address).toMatchObject({ Name: 'Anna Gruber', Street: 'Linzer Gasse 5', Town: 'Salzburg', ZIP: '5020' });
    expect(inv.PaymentMethod).toBeUndefined();
  });

  it('marks reverse charge with AE, 0 % and the legal wording', () => {
    const inv = parse(buildEbInterfaceXml(reverseCharge));
    expect(inv.InvoiceRecipient.VATIdentificationNumber).toBe('DE136695976');
    expect(inv.Tax.TaxItem).toMatchObject({
      TaxableAmount: '4400.00',
      TaxPercent: { '#text': '0', '@_TaxCategoryCode': 'AE' },
      TaxAmount: '0.00',
      Comment: 'Übergang der Steuerschuld auf den Leistungsempfänger (Reverse Charge).',
    });
    expect(inv.Details.ItemList.ListLineItem.TaxItem.TaxPercent['@_TaxCategoryCode']).toBe('AE');
    expect(inv.Comment).toContain('Übergang der Steuerschuld');
    const de = parse(
      buildEbInterfaceXml(makeDocument(sellerDE, customerAT, { itemSpecs: [{ description: 'x', quantity: '1', unitPrice: '1.00', taxRate: '0' }] })),
    );
    expect(de.Tax.TaxItem.Comment).toBe('Steuerschuldnerschaft des Leistungsempfängers (Reverse Charge).');
  });

  it('writes a credit note as CreditMemo with positive amounts, NoPayment and the related invoice', () => {
    const [, input] = scenarios[3];
    expect(input.invoice.totalGross.startsWith('-')).toBe(true);
    const inv = parse(buildEbInterfaceXml(input));
    expect(inv['@_DocumentType']).toBe('CreditMemo');
    expect(inv.RelatedDocument).toMatchObject({ InvoiceNumber: 'RE-2026-00001', DocumentType: 'Invoice' });
    expect(inv.TotalGrossAmount).toBe(input.invoice.totalGross.slice(1));
    expect(inv.PayableAmount).toBe(input.invoice.totalGross.slice(1));
    expect(inv.PaymentMethod.NoPayment).toBeDefined();
    expect(inv.PaymentConditions).toBeUndefined();
    for (const l of asArray(inv.Details.ItemList.ListLineItem) as Any[]) expect(l.LineItemAmount).not.toMatch(/^-/);
  });

  it('writes the prepaid amount for a partial payment', () => {
    const inv = parse(buildEbInterfaceXml(scenarios[5][1]));
    expect(inv.PrepaidAmount).toBe('123.45');
    expect(new Decimal(inv.TotalGrossAmount).minus(inv.PrepaidAmount).toFixed(2)).toBe(inv.PayableAmount);
  });

  it('escapes user text and keeps it intact', () => {
    const xml = buildEbInterfaceXml(scenarios[7][1]);
    expect(xml).not.toContain('<b>');
    const inv = parse(xml);
    const lines = asArray(inv.Details.ItemList.ListLineItem) as Any[];
    expect(lines[0].Description).toBe(special);
    expect(lines[1]).toMatchObject({ Quantity: { '#text': '-1' }, UnitPrice: '5.00', LineItemAmount: '-5.00' });
    expect(inv.InvoiceRecipient.Address.Name).toBe('Müller & Söhne <KG>');
    expect(inv.Comment).toBe('Danke & <b>Tschüss</b>');
  });

  it('refuses quotes, drafts and invoices without a customer', () => {
    expect(exportError(() => buildEbInterfaceXml(makeDocument(sellerAT, customerAT, { type: 'angebot' }))).message).toMatch(/angebot/);
    expect(exportError(() => buildEbInterfaceXml(makeDocument(sellerAT, customerAT, { status: 'entwurf', number: null }))).message).toMatch(/draft/);
    expect(exportError(() => buildEbInterfaceXml(makeDocument(sellerAT, null))).message).toMatch(/buyer/);
  });

  it('refuses an address without postcode and town', () => {
    const e = exportError(() => buildEbInterfaceXml(makeDocument(sellerAT, { ...customerAT, address: 'Hauptplatz 1' })));
    expect(e.violations.map((v) => v.rule)).toEqual(['EBI-ADDRESS']);
    expect(e.message).toMatch(/customer address needs a street, postcode and town for ebInterface \(missing: postcode, town\)/);
  });

  it('refuses an address without street (§ 11 UStG: full address), for the seller and the customer', () => {
    const seller = exportError(() => buildEbInterfaceXml(makeDocument({ ...sellerAT, address: '1060 Wien' }, customerAT)));
    expect(seller.violations).toEqual([{ rule: 'EBI-ADDRESS', message: expect.stringMatching(/seller address .*\(missing: street\)/) }]);
    const e = exportError(() => buildEbInterfaceXml(makeDocument({ ...sellerAT, address: null }, { ...customerAT, address: 'A-8010 Graz' })));
    expect(e.violations.map((v) => v.message)).toEqual([
      expect.stringMatching(/seller address .*\(missing: street, postcode, town\)/),
      expect.stringMatching(/customer address .*\(missing: street\)/),
    ]);
  });

  describe('VAT ids (UID) beyond the XSD', () => {
    it('EBI-UID-BILLER: a seller without UID cannot charge VAT; a stored placeholder is no UID', () => {
      for (const vatId of [null, '', 'ATU00000000', '00000000']) {
        const e = exportError(() => buildEbInterfaceXml(makeDocument({ ...sellerAT, vatId }, customerAT, { itemSpecs: mixedItemsAT })));
        expect(e.violations.map((v) => v.rule)).toEqual(['EBI-UID-BILLER']);
        expect(e.message).toMatch(/charges VAT, so it must show the seller's VAT id \(UID, § 11 Abs\. 1 Z 3 lit\. i UStG\)/);
      }
      // Also when only one line of several carries VAT (530.00 gross: above the EUR 400 small-invoice relief).
      const mixed = [...zeroRated, { description: 'Buchpaket', quantity: '1', unitPrice: '300.00', taxRate: '10' }];
      expect(rules(() => buildEbInterfaceXml(makeDocument({ ...sellerAT, vatId: null }, customerPrivate, { itemSpecs: mixed })))).toEqual(['EBI-UID-BILLER']);
    });

    it.skipIf(!official)('EBI-UID-BILLER: a small-amount invoice up to EUR 400 gross needs no seller UID (§ 11 Abs. 6 UStG)', () => {
      const small = (net: string) =>
        makeDocument({ ...sellerAT, vatId: null }, customerPrivate, { itemSpecs: [{ description: 'Beratung', quantity: '1', unitPrice: net, taxRate: '20' }] });
      const xml = buildEbInterfaceXml(small('333.33')); // 400.00 gross: still a Kleinbetragsrechnung
      expectValid(xml);
      expect(parse(xml).Biller.VATIdentificationNumber).toBe('00000000');
      expect(rules(() => buildEbInterfaceXml(small('333.34')))).toEqual(['EBI-UID-BILLER']); // 400.01 gross
    });

    it.skipIf(!official)('a seller without UID that charges no VAT gets 00000000 and validates', () => {
      const xml = buildEbInterfaceXml(makeDocument({ ...sellerAT, vatId: null }, customerPrivate, { itemSpecs: zeroRated }));
      expectValid(xml);
      const inv = parse(xml);
      expect(inv.Biller.VATIdentificationNumber).toBe('00000000');
      expect(inv.InvoiceRecipient.VATIdentificationNumber).toBe('00000000');
      expect(inv.Tax.TaxItem.TaxPercent).toEqual({ '#text': '0', '@_TaxCategoryCode': 'Z' });
    });

    it('EBI-UID-RECIPIENT: over EUR 10,000 gross to an Austrian business needs its UID (§ 11 Abs. 1 Z 3 lit. j UStG)', () => {
      const over = makeDocument(sellerAT, customerATNoUid, { itemSpecs: overLimit });
      expect(over.invoice.totalGross).toBe('10000.01');
      const e = exportError(() => buildEbInterfaceXml(over));
      expect(e.violations.map((v) => v.rule)).toEqual(['EBI-UID-RECIPIENT']);
      expect(e.message).toMatch(/gross total 10000\.01 EUR exceeds EUR 10,000 and the customer is an Austrian business/);
      // A placeholder typed into the customer's VAT id does not count either.
      expect(rules(() => buildEbInterfaceXml(makeDocument(sellerAT, { ...customerAT, vatId: 'ATU 000 000 00' }, { itemSpecs: overLimit })))).toEqual([
        'EBI-UID-RECIPIENT',
      ]);
      // Credit notes are invoices in the sense of § 11 too; the stored negative total counts by its amount.
      const credit = negateAmounts(makeDocument(sellerAT, customerATNoUid, { type: 'gutschrift', number: 'GS-2026-00003', itemSpecs: overLimit }));
      expect(rules(() => buildEbInterfaceXml(credit))).toEqual(['EBI-UID-RECIPIENT']);
    });

    it('EBI-UID-RECIPIENT: another currency cannot be compared with the EUR limit, so the UID is required', () => {
      const chf = makeDocument(sellerAT, customerATNoUid, { currency: 'CHF' });
      const e = exportError(() => buildEbInterfaceXml(chf));
      expect(e.violations.map((v) => v.rule)).toEqual(['EBI-UID-RECIPIENT']);
      expect(e.message).toMatch(/in CHF and cannot be compared with the EUR 10,000 limit/);
    });

    it.skipIf(!official)('00000000 for the recipient where the law allows it, and the XML validates', () => {
      const allowed: Array<[string, DocumentInput]> = [
        ['exactly EUR 10,000 to a business', makeDocument(sellerAT, customerATNoUid, { itemSpecs: atLimit })],
        ['over EUR 10,000 to a consumer', makeDocument(sellerAT, customerPrivate, { itemSpecs: overLimit })],
        [
          'over EUR 10,000 from a seller not established in Austria',
          makeDocument(sellerDE, customerATNoUid, { itemSpecs: [{ description: 'Projekt', quantity: '1', unitPrice: '9000.00', taxRate: '19' }] }),
        ],
        ['small invoice to a business', makeDocument(sellerAT, customerATNoUid)],
      ];
      for (const [name, input] of allowed) {
        const xml = buildEbInterfaceXml(input);
        expect(validateXml(xml, EBI_XSD), name).toEqual({ valid: true, errors: '' });
        expect(parse(xml).InvoiceRecipient.VATIdentificationNumber, name).toBe('00000000');
      }
      expect(makeDocument(sellerAT, customerATNoUid, { itemSpecs: atLimit }).invoice.totalGross).toBe('10000.00');
      // Over the limit with the customer's UID: written as stored (normalised).
      const xml = buildEbInterfaceXml(makeDocument(sellerAT, { ...customerAT, vatId: 'ATU 876 543 21' }, { itemSpecs: overLimit }));
      expectValid(xml);
      expect(parse(xml).InvoiceRecipient.VATIdentificationNumber).toBe('ATU87654321');
    });

    it('EBI-AE: reverse charge needs both UIDs', () => {
      const rcItems = [{ description: 'Implementierung', quantity: '1', unitPrice: '100.00', taxRate: '0' }];
      const noSellerUid = exportError(() => buildEbInterfaceXml(makeDocument({ ...sellerAT, vatId: null }, customerDE, { itemSpecs: rcItems })));
      expect(noSellerUid.violations).toEqual([{ rule: 'EBI-AE', message: expect.stringMatching(/Reverse charge requires the seller's VAT id/) }]);
      // "ATU00000000" looks like an Austrian UID to the category logic (another EU state than DE),
      // but it is the placeholder: no reverse charge without the recipient's real UID.
      const placeholderBuyer = exportError(() => buildEbInterfaceXml(makeDocument(sellerDE, { ...customerAT, vatId: 'ATU00000000' }, { itemSpecs: rcItems })));
      expect(placeholderBuyer.violations).toEqual([{ rule: 'EBI-AE', message: expect.stringMatching(/requires the recipient's VAT id/) }]);
    });
  });

  it.skipIf(!official)('Delivery/Date is the service date, else the issue date; a service period is Delivery/Period', () => {
    expect(parse(buildEbInterfaceXml(makeDocument(sellerAT, customerAT))).Delivery).toEqual({ Date: '2026-03-05' });
    const noServiceDate = buildEbInterfaceXml(makeDocument(sellerAT, customerAT, { serviceDate: null }));
    expectValid(noServiceDate);
    expect(parse(noServiceDate).Delivery).toEqual({ Date: '2026-03-10' });
    const period = buildEbInterfaceXml(makeDocument(sellerAT, customerAT, { serviceDate: '2026-03-01', serviceEndDate: '2026-03-31' }));
    expectValid(period);
    expect(parse(period).Delivery).toEqual({ Period: { FromDate: '2026-03-01', ToDate: '2026-03-31' } });
  });

  it('refuses amounts that do not reconcile', () => {
    const a = makeDocument(sellerAT, customerAT, { itemSpecs: mixedItemsAT });
    a.invoice.totalGross = new Decimal(a.invoice.totalGross).plus('0.01').toFixed(2);
    expect(exportError(() => buildEbInterfaceXml(a)).violations.map((v) => v.rule)).toContain('EBI-TOTAL');
    const b = makeDocument(sellerAT, customerAT, { itemSpecs: mixedItemsAT });
    b.invoice.taxBreakdown[0].net = '1.00';
    expect(exportError(() => buildEbInterfaceXml(b)).violations.map((v) => v.rule)).toContain('EBI-TAX');
    const c = makeDocument(sellerAT, customerAT);
    c.invoice.items[0].netAmount = '199.99';
    expect(exportError(() => buildEbInterfaceXml(c)).violations.map((v) => v.rule)).toContain('EBI-LINE-NET');
  });

  it.skipIf(!official)('every random invoice validates against the XSD', () => {
    fc.assert(
      fc.property(documentArb, (input) => {
        expect(validateXml(buildEbInterfaceXml(input), EBI_XSD)).toEqual({ valid: true, errors: '' });
      }),
      { numRuns: 40 },
    );
  });
});

describe.skipIf(!official)('official ebInterface 6.1 samples (sanity check of validateXml)', () => {
  const samples = official ? readdirSync(EBI_SAMPLES).filter((f) => f.endsWith('.xml')) : [];
  const valid = samples.filter((f) => !f.includes('_invalid'));

  it.each(valid)('%s validates', (file) => {
    expect(validateXml(readFileSync(join(EBI_SAMPLES, file)), EBI_XSD)).toEqual({ valid: true, errors: '' });
  });

  it('ebinterface_6p1_sample_ecosio_invalid.xml fails', () => {
    const result = validateXml(readFileSync(join(EBI_SAMPLES, 'ebinterface_6p1_sample_ecosio_invalid.xml')), EBI_XSD);
    expect(result.valid).toBe(false);
    expect(result.errors).toMatch(/InvoiceDate.*This element is not expected.*InvoiceNumber/s);
  });
});
