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
import {
  customerAT,
  customerDE,
  customerPrivate,
  documentArb,
  EBI_SAMPLES,
  EBI_XSD,
  makeDocument,
  mixedItemsAT,
  mixedItemsDE,
  negateAmounts,
  sellerAT,
  sellerDE,
} from '../cii/fixtures';

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseTagValue: false });
type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const parse = (xml: string): Any => parser.parse(xml).Invoice;
const asArray = <T,>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

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

const reverseCharge = makeDocument(sellerAT, customerDE, {
  itemSpecs: [{ description: 'Implementierung', quantity: '40', unitPrice: '110.00', taxRate: '0', unit: 'Std' }],
});

const scenarios: Array<[string, DocumentInput]> = [
  ['AT seller, mixed rates 20/10/13', makeDocument(sellerAT, customerAT, { itemSpecs: mixedItemsAT })],
  ['DE seller, mixed rates 19/7', makeDocument(sellerDE, customerDE, { itemSpecs: mixedItemsDE })],
  ['reverse charge AT → DE', reverseCharge],
  ['credit note (negative reversal)', negateAmounts(makeDocument(sellerAT, customerAT, { type: 'gutschrift', number: 'GS-2026-00001', relatedInvoiceNumber: 'RE-2026-00001', itemSpecs: mixedItemsAT }))],
  ['credit note (positive)', makeDocument(sellerDE, customerDE, { type: 'gutschrift', number: 'GS-2026-00002', itemSpecs: mixedItemsDE })],
  ['partially paid, private customer', makeDocument(sellerAT, customerPrivate, { itemSpecs: mixedItemsAT, paid: '123.45' })],
  ['fully paid', makeDocument(sellerAT, customerAT, { paid: '240.00', status: 'bezahlt' })],
  [
    'special characters',
    makeDocument(sellerAT, { ...customerAT, company: 'Müller & Söhne <KG>' }, {
      itemSpecs: [
        { description: special, quantity: '0.0001', unitPrice: '12345.67', taxRate: '20', unit: 'Stk' },
        { description: 'Rabatt "Treue"', quantity: '1', unitPrice: '-5.00', taxRate: '20' },
      ],
      notes: 'Danke & <b>Tschüss</b>',
    }),
  ],
  ['seller without IBAN and VAT id', makeDocument({ ...sellerAT, iban: null, bic: null, vatId: null }, customerAT)],
];

describe('buildEbInterfaceXml', () => {
  it.each(scenarios)('%s: valid against the ebInterface 6.1 XSD', (_name, input) => {
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
      Name: 'Huber Software GmbH', Street: 'Mariahilfer Straße 12/3', Town: 'Wien', ZIP: '1060',
      Country: { '#text': 'Österreich', '@_CountryCode': 'AT' }, Email: 'office@huber-software.at',
    });
    expect(inv.Biller.Contact).toEqual({ Name: 'Maria Huber', Email: 'office@huber-software.at' });
    expect(inv.InvoiceRecipient.VATIdentificationNumber).toBe('ATU87654321');
    expect(inv.InvoiceRecipient.Address).toMatchObject({ Name: 'Berger Bau GmbH', Street: 'Hauptplatz 1', Town: 'Graz', ZIP: '8010' });
    const lines = asArray(inv.Details.ItemList.ListLineItem) as Any[];
    expect(lines.map((l) => [l.PositionNumber, l.Quantity['@_Unit'], l.TaxItem.TaxPercent['@_TaxCategoryCode'], l.TaxItem.TaxPercent['#text']]))
      .toEqual([['1', 'HUR', 'S', '20'], ['2', 'H87', 'S', '10'], ['3', 'LS', 'S', '13'], ['4', 'KMT', 'S', '20']]);
    expect(lines[0]).toMatchObject({ UnitPrice: '95.00', LineItemAmount: '1187.50', Quantity: { '#text': '12.5' } });
    const taxes = asArray(inv.Tax.TaxItem) as Any[];
    expect(taxes.map((t) => [t.TaxableAmount, t.TaxPercent['#text'], t.TaxAmount])).toEqual(
      input.invoice.taxBreakdown.map((g) => [g.net, g.taxRate, g.tax]),
    );
    expect(inv.TotalGrossAmount).toBe(input.invoice.totalGross);
    expect(inv.PayableAmount).toBe(input.invoice.amountDue);
    expect(inv.PaymentMethod.UniversalBankTransaction.BeneficiaryAccount).toEqual({
      BIC: 'BKAUATWW', IBAN: 'AT611904300234573201', BankAccountOwner: 'Huber Software GmbH',
    });
    expect(inv.PaymentConditions.DueDate).toBe('2026-03-24');
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
    const de = parse(buildEbInterfaceXml(makeDocument(sellerDE, customerAT, { itemSpecs: [{ description: 'x', quantity: '1', unitPrice: '1.00', taxRate: '0' }] })));
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
    expect(e.message).toMatch(/customer address needs a postcode and town/);
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

  it('every random invoice validates against the XSD', () => {
    fc.assert(
      fc.property(documentArb, (input) => {
        expect(validateXml(buildEbInterfaceXml(input), EBI_XSD)).toEqual({ valid: true, errors: '' });
      }),
      { numRuns: 40 },
    );
  });
});

describe('official ebInterface 6.1 samples (sanity check of validateXml)', () => {
  const samples = readdirSync(EBI_SAMPLES).filter((f) => f.endsWith('.xml'));
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
