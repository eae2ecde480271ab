/**
 * UBL 2.1 (Peppol BIS Billing 3.0 and XRechnung 3.0): the writer serialises the EN 16931 model in
 * XSD order (checked with the official UBL 2.1 maindoc XSDs), passes our rule check, and refuses
 * with rule ids what the profiles forbid.
 */
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import type { DocumentInput, InvoiceItemView } from '../../../shared/domain/invoiceView';
import { toEInvoiceModel } from '../../../shared/formats/cii/einvoiceModel';
import type { EInvoiceModel } from '../../../shared/formats/cii/einvoiceModelTypes';
import { EInvoiceExportError } from '../../../shared/formats/cii/exportError';
import { buildUblDocument, buildUblInvoice, checkUblInvoice, checkUblRules, UBL_PROFILES, type UblProfile } from '../../../shared/formats/ubl/ublInvoice';
import { renderXml } from '../../../shared/formats/xml';
import { needsOfficialFiles, type OfficialFile, officialPath } from '../../helpers/officialFiles';
import { validateXml } from '../../helpers/xmllint';
import { customerAT, customerDE, makeDocument, mixedItemsAT, mixedItemsDE, negateAmounts, sellerAT, sellerDE } from '../cii/fixtures';

const UBL_INVOICE_XSD_FILE: OfficialFile = 'schemas:ubl-2.1/maindoc/UBL-Invoice-2.1.xsd';
const UBL_CREDIT_NOTE_XSD_FILE: OfficialFile = 'schemas:ubl-2.1/maindoc/UBL-CreditNote-2.1.xsd';
const official = needsOfficialFiles([UBL_INVOICE_XSD_FILE, UBL_CREDIT_NOTE_XSD_FILE]);

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', removeNSPrefix: true, parseTagValue: false });
const parse = (xml: string): Any => {
  const doc = parser.parse(xml);
  return doc.Invoice ?? doc.CreditNote;
};
const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const PROFILES: UblProfile[] = ['peppol', 'xrechnung'];

/** The model as the route will hand it over once the data exists: Peppol ids, BT-10, BT-13, seller contact. */
function ready(input: DocumentInput, extra: Partial<EInvoiceModel> = {}): EInvoiceModel {
  const m = toEInvoiceModel(input);
  const id = (p: EInvoiceModel['seller']) => (p.vatId ? { scheme: p.vatId.startsWith('DE') ? '9930' : '9914', id: p.vatId } : null);
  return {
    ...m,
    seller: { ...m.seller, electronicAddress: id(m.seller), contactName: m.seller.contactName ?? 'Buchhaltung', phone: m.seller.phone ?? '+49 89 1234567' },
    buyer: { ...m.buyer, electronicAddress: id(m.buyer) },
    buyerReference: '04011000-12345-34',
    orderReference: 'PO-4711',
    ...extra,
  };
}

/** A document whose lines (rate) carry the given stored VAT categories. */
function withCategories(seller: typeof sellerAT, customer: typeof customerAT, lines: Array<[string, Partial<InvoiceItemView>]>): DocumentInput {
  const input = makeDocument(seller, customer, {
    itemSpecs: lines.map(([rate], i) => ({ description: `Position ${i + 1}`, quantity: '1', unitPrice: `${100 * (i + 1)}.00`, taxRate: rate, unit: 'Stk' })),
  });
  input.invoice.items = input.invoice.items.map((item, i) => ({ exemptionReason: null, exemptionNote: null, ...item, ...lines[i][1] }));
  return input;
}

function usd(): DocumentInput {
  const input = makeDocument(sellerAT, customerAT, { currency: 'USD' });
  input.invoice.exchangeRate = { rate: '1.0867', date: '2026-03-09', source: 'ecb' };
  return input;
}

const scenarios: Array<[string, () => EInvoiceModel]> = [
  ['domestic 20 % (AT)', () => ready(makeDocument(sellerAT, customerAT))],
  ['domestic DE → DE, both German (several notes)', () => ready(makeDocument(sellerDE, customerDE, { notes: 'Danke.', footerText: 'Geschäftsführer: Max' }))],
  [
    'reverse charge AT → DE',
    () =>
      ready(
        makeDocument(sellerAT, customerDE, {
          itemSpecs: [{ description: 'Implementierung Schnittstelle', quantity: '40', unitPrice: '110.00', taxRate: '0', unit: 'Std' }],
        }),
      ),
  ],
  [
    'mixed rates 20/10/0 exempt',
    () =>
      ready(
        withCategories(sellerAT, customerAT, [
          ['20', { taxCategory: 'standard' }],
          ['10', { taxCategory: 'standard' }],
          ['0', { taxCategory: 'exempt', exemptionReason: 'AT-6-1-16' }],
        ]),
      ),
  ],
  ['intra-Community supply (K) with deliver-to country', () => ready(withCategories(sellerAT, customerDE, [['0', { taxCategory: 'intraCommunitySupply' }]]))],
  [
    'credit note referencing an invoice (stored negative)',
    () =>
      ready(
        negateAmounts(
          makeDocument(sellerAT, customerAT, { type: 'gutschrift', number: 'GS-2026-00001', relatedInvoiceNumber: 'RE-2026-00001', itemSpecs: mixedItemsAT }),
        ),
      ),
  ],
  ['not subject to VAT (O)', () => ready(withCategories(sellerAT, customerAT, [['0', { taxCategory: 'notSubject' }]]))],
  ['not subject to VAT (O), DE → DE', () => ready(withCategories(sellerDE, customerDE, [['0', { taxCategory: 'notSubject' }]]))],
  [
    'credit note DE → DE',
    () => ready(makeDocument(sellerDE, customerDE, { type: 'gutschrift', number: 'GS-2026-00002', relatedInvoiceNumber: 'RE-2026-00042' })),
  ],
  ['mixed rates DE 19/7, both German', () => ready(makeDocument(sellerDE, customerDE, { itemSpecs: mixedItemsDE }))],
  [
    'reverse charge DE → AT',
    () =>
      ready(
        makeDocument(sellerDE, customerAT, {
          itemSpecs: [{ description: 'Beratung', quantity: '8', unitPrice: '120.00', taxRate: '0', unit: 'Std' }],
        }),
      ),
  ],
  [
    'credit note DE 19/7 (stored negative)',
    () =>
      ready(
        negateAmounts(
          makeDocument(sellerDE, customerDE, { type: 'gutschrift', number: 'GS-2026-00003', relatedInvoiceNumber: 'RE-2026-00043', itemSpecs: mixedItemsDE }),
        ),
      ),
  ],
  ['foreign currency with VAT in EUR (BT-6, BT-111)', () => ready(usd())],
  [
    'service period, partially paid',
    () => ready(makeDocument(sellerAT, customerAT, { serviceDate: '2026-03-01', serviceEndDate: '2026-03-31', paid: '100.00' })),
  ],
];

describe('buildUblInvoice: valid UBL 2.1 in both profiles', () => {
  for (const [name, model] of scenarios) {
    for (const profile of PROFILES) {
      it(`${name} — ${profile}`, () => {
        const m = model();
        const xml = buildUblInvoice(m, { profile });
        expect(checkUblInvoice(m, xml, profile)).toEqual([]);
        if (official) {
          const xsd = officialPath(m.kind === 'invoice' ? UBL_INVOICE_XSD_FILE : UBL_CREDIT_NOTE_XSD_FILE);
          const result = validateXml(xml, xsd);
          expect(result.errors).toBe('');
          expect(result.valid).toBe(true);
        }
      });
    }
  }
});

describe('what the UBL document says', () => {
  it('header: profile ids, number, dates, type code, currency, BT-10, BT-13', () => {
    const doc = parse(buildUblInvoice(ready(makeDocument(sellerAT, customerAT)), { profile: 'peppol' }));
    expect(doc.CustomizationID).toBe(UBL_PROFILES.peppol.customizationId);
    expect(doc.ProfileID).toBe('urn:fdc:peppol.eu:2017:poacc:billing:01:1.0');
    expect(doc).toMatchObject({ ID: 'RE-2026-00001', IssueDate: '2026-03-10', DueDate: '2026-03-24', InvoiceTypeCode: '380', DocumentCurrencyCode: 'EUR' });
    expect(doc.BuyerReference).toBe('04011000-12345-34');
    expect(doc.OrderReference.ID).toBe('PO-4711');
    expect(doc.Delivery.ActualDeliveryDate).toBe('2026-03-05');
    const x = parse(buildUblInvoice(ready(makeDocument(sellerDE, customerDE)), { profile: 'xrechnung' }));
    expect(x.CustomizationID).toBe('urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0');
  });

  it('parties: endpoint ids with scheme, address, VAT id and tax number, legal name, seller contact', () => {
    const doc = parse(buildUblInvoice(ready(makeDocument(sellerAT, customerAT)), { profile: 'xrechnung' }));
    const seller = doc.AccountingSupplierParty.Party;
    expect(seller.EndpointID).toEqual({ '#text': 'ATU12345678', '@_schemeID': '9914' });
    expect(seller.PostalAddress).toMatchObject({
      StreetName: 'Mariahilfer Straße 12/3',
      CityName: 'Wien',
      PostalZone: '1060',
      Country: { IdentificationCode: 'AT' },
    });
    expect(asArray(seller.PartyTaxScheme).map((s: Any) => [s.CompanyID, s.TaxScheme.ID])).toEqual([
      ['ATU12345678', 'VAT'],
      ['12 345/6789', 'FC'],
    ]);
    expect(seller.PartyLegalEntity.RegistrationName).toBe('Huber Software GmbH');
    expect(seller.Contact).toEqual({ Name: 'Maria Huber', Telephone: '+43 1 234 56 78', ElectronicMail: 'office@huber-software.at' });
    const buyer = doc.AccountingCustomerParty.Party;
    expect(buyer.EndpointID['@_schemeID']).toBe('9914');
    expect(buyer.PartyTaxScheme).toMatchObject({ CompanyID: 'ATU87654321', TaxScheme: { ID: 'VAT' } });
  });

  it('payment: SEPA credit transfer with IBAN and BIC, payment terms, totals with currencyID', () => {
    const doc = parse(buildUblInvoice(ready(makeDocument(sellerAT, customerAT)), { profile: 'peppol' }));
    expect(doc.PaymentMeans.PaymentMeansCode['#text']).toBe('58');
    expect(doc.PaymentMeans.PaymentID).toBe('RE-2026-00001');
    expect(doc.PaymentMeans.PayeeFinancialAccount).toMatchObject({ ID: 'AT611904300234573201', FinancialInstitutionBranch: { ID: 'BKAUATWW' } });
    expect(doc.PaymentTerms.Note).toBe('Zahlbar ohne Abzug bis 24.03.2026.');
    expect(doc.LegalMonetaryTotal).toEqual({
      LineExtensionAmount: { '#text': '200.00', '@_currencyID': 'EUR' },
      TaxExclusiveAmount: { '#text': '200.00', '@_currencyID': 'EUR' },
      TaxInclusiveAmount: { '#text': '240.00', '@_currencyID': 'EUR' },
      PayableAmount: { '#text': '240.00', '@_currencyID': 'EUR' },
    });
    const line = doc.InvoiceLine;
    expect(line.InvoicedQuantity).toEqual({ '#text': '2', '@_unitCode': 'HUR' });
    expect(line.Item).toMatchObject({ Name: 'Beratung', ClassifiedTaxCategory: { ID: 'S', Percent: '20', TaxScheme: { ID: 'VAT' } } });
    expect(line.Price.PriceAmount).toEqual({ '#text': '100.00', '@_currencyID': 'EUR' });
  });

  it('VAT breakdown: one subtotal per category with exemption reason and VATEX code', () => {
    const m = ready(
      withCategories(sellerAT, customerAT, [
        ['20', { taxCategory: 'standard' }],
        ['10', { taxCategory: 'standard' }],
        ['0', { taxCategory: 'exempt', exemptionReason: 'AT-6-1-16' }],
      ]),
    );
    const doc = parse(buildUblInvoice(m, { profile: 'peppol' }));
    const subtotals = asArray(doc.TaxTotal.TaxSubtotal).map((s: Any) => [
      s.TaxableAmount['#text'],
      s.TaxAmount['#text'],
      s.TaxCategory.ID,
      s.TaxCategory.Percent,
    ]);
    expect(subtotals).toEqual([
      ['100.00', '20.00', 'S', '20'],
      ['200.00', '20.00', 'S', '10'],
      ['300.00', '0.00', 'E', '0'],
    ]);
    const exempt = asArray(doc.TaxTotal.TaxSubtotal)[2].TaxCategory;
    expect(exempt.TaxExemptionReason).toContain('§ 6 Abs. 1 Z 16 UStG 1994');
    expect(exempt.TaxExemptionReasonCode).toBe(m.taxGroups[2].exemptionReasonCode ?? undefined);
  });

  it('reverse charge: AE with VATEX-EU-AE; intra-Community supply: K with deliver-to country', () => {
    const rc = parse(
      buildUblInvoice(ready(makeDocument(sellerAT, customerDE, { itemSpecs: [{ description: 'X', quantity: '1', unitPrice: '10.00', taxRate: '0' }] })), {
        profile: 'peppol',
      }),
    );
    expect(rc.TaxTotal.TaxSubtotal.TaxCategory).toMatchObject({ ID: 'AE', Percent: '0', TaxExemptionReasonCode: 'VATEX-EU-AE' });
    const k = parse(buildUblInvoice(ready(withCategories(sellerAT, customerDE, [['0', { taxCategory: 'intraCommunitySupply' }]])), { profile: 'peppol' }));
    expect(k.TaxTotal.TaxSubtotal.TaxCategory.ID).toBe('K');
    expect(k.Delivery.DeliveryLocation.Address).toMatchObject({ CityName: 'Frankfurt', PostalZone: '69876', Country: { IdentificationCode: 'DE' } });
    const broken = buildUblInvoice(ready(withCategories(sellerAT, customerDE, [['0', { taxCategory: 'intraCommunitySupply' }]])), {
      profile: 'xrechnung',
    }).replace(/(<cac:DeliveryLocation>[\s\S]*?)<cbc:CityName>Frankfurt<\/cbc:CityName>/, '$1');
    expect([...ruleIds(checkUblRules(broken, 'xrechnung'))]).toEqual(['BR-DE-10']);
  });

  it('not subject to VAT: no VAT ids, seller identifier (BT-29), no rate on the line; XRechnung writes 0 % in the breakdown (BR-DE-14)', () => {
    const m = ready(withCategories(sellerAT, customerAT, [['0', { taxCategory: 'notSubject' }]]));
    const peppol = parse(buildUblInvoice(m, { profile: 'peppol' }));
    const seller = peppol.AccountingSupplierParty.Party;
    expect(seller.PartyIdentification.ID).toBe('ATU12345678');
    expect(asArray(seller.PartyTaxScheme).map((s: Any) => s.TaxScheme.ID)).toEqual(['FC']);
    expect(peppol.AccountingCustomerParty.Party.PartyTaxScheme).toBeUndefined();
    expect(peppol.InvoiceLine.Item.ClassifiedTaxCategory.Percent).toBeUndefined();
    expect(peppol.TaxTotal.TaxSubtotal.TaxCategory.ID).toBe('O');
    expect(peppol.TaxTotal.TaxSubtotal.TaxCategory.Percent).toBeUndefined();
    const x = parse(buildUblInvoice(m, { profile: 'xrechnung' }));
    expect(x.TaxTotal.TaxSubtotal.TaxCategory.Percent).toBe('0');
    expect(x.InvoiceLine.Item.ClassifiedTaxCategory.Percent).toBeUndefined();
  });

  it('credit note: CreditNote root, 381, positive amounts, billing reference (BT-25), no due date', () => {
    const m = ready(negateAmounts(makeDocument(sellerAT, customerAT, { type: 'gutschrift', number: 'GS-1', relatedInvoiceNumber: 'RE-1' })));
    const xml = buildUblInvoice(m, { profile: 'peppol' });
    expect(xml).toContain('<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"');
    const doc = parse(xml);
    expect(doc.CreditNoteTypeCode).toBe('381');
    expect(doc.BillingReference.InvoiceDocumentReference.ID).toBe('RE-1');
    expect(doc.DueDate).toBeUndefined();
    expect(doc.PaymentMeans).toBeUndefined();
    expect(doc.LegalMonetaryTotal.PayableAmount['#text']).toBe('240.00');
    expect(doc.CreditNoteLine.CreditedQuantity['#text']).toBe('2');
    // XRechnung requires payment instructions even on a credit note (BR-DE-1).
    expect(parse(buildUblInvoice(m, { profile: 'xrechnung' })).PaymentMeans.PaymentMeansCode).toBe('1');
  });

  it('foreign currency: TaxCurrencyCode EUR and a second TaxTotal with BT-111 only', () => {
    const doc = parse(buildUblInvoice(ready(usd()), { profile: 'peppol' }));
    expect(doc.DocumentCurrencyCode).toBe('USD');
    expect(doc.TaxCurrencyCode).toBe('EUR');
    const [main, eur] = asArray(doc.TaxTotal);
    expect(main.TaxAmount).toEqual({ '#text': '40.00', '@_currencyID': 'USD' });
    expect(eur).toEqual({ TaxAmount: { '#text': '36.81', '@_currencyID': 'EUR' } });
  });

  it('notes: one joined note unless seller and buyer are German (PEPPOL-EN16931-R002)', () => {
    const at = parse(buildUblInvoice(ready(makeDocument(sellerAT, customerAT, { notes: 'Danke.', footerText: 'FN 123456a' })), { profile: 'peppol' }));
    expect(at.Note).toBe('Danke.\nFN 123456a');
    const de = parse(buildUblInvoice(ready(makeDocument(sellerDE, customerDE, { notes: 'Danke.', footerText: 'HRB 1' })), { profile: 'peppol' }));
    expect(de.Note).toEqual(['Danke.', 'HRB 1']);
  });

  it('a service period is the invoice period and no delivery date is claimed', () => {
    const doc = parse(
      buildUblInvoice(ready(makeDocument(sellerAT, customerAT, { serviceDate: '2026-03-01', serviceEndDate: '2026-03-31' })), { profile: 'peppol' }),
    );
    expect(doc.InvoicePeriod).toEqual({ StartDate: '2026-03-01', EndDate: '2026-03-31' });
    expect(doc.Delivery).toBeUndefined();
  });
});

function refusal(fn: () => unknown): EInvoiceExportError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(EInvoiceExportError);
    return e as EInvoiceExportError;
  }
  throw new Error('expected an EInvoiceExportError');
}
const ruleIds = (e: EInvoiceExportError | ReadonlyArray<{ rule: string }>) => new Set(('violations' in e ? e.violations : e).map((v) => v.rule));

describe('refusals with rule ids', () => {
  it('Peppol without seller endpoint id → PEPPOL-EN16931-R020; without buyer endpoint → R010', () => {
    const m = ready(makeDocument(sellerAT, customerAT));
    const e = refusal(() => buildUblInvoice({ ...m, seller: { ...m.seller, electronicAddress: null } }, { profile: 'peppol' }));
    expect([...ruleIds(e)]).toEqual(['PEPPOL-EN16931-R020']);
    expect(e.message).toContain('Peppol BIS Billing 3.0');
    expect(ruleIds(refusal(() => buildUblInvoice({ ...m, buyer: { ...m.buyer, electronicAddress: null } }, { profile: 'peppol' })))).toEqual(
      new Set(['PEPPOL-EN16931-R010']),
    );
  });

  it('XRechnung accepts the e-mail address as electronic address (EAS EM), Peppol does not', () => {
    const m = ready(makeDocument(sellerAT, customerAT));
    const noIds = { ...m, seller: { ...m.seller, electronicAddress: null }, buyer: { ...m.buyer, electronicAddress: null } };
    expect(parse(buildUblInvoice(noIds, { profile: 'xrechnung' })).AccountingSupplierParty.Party.EndpointID).toEqual({
      '#text': 'office@huber-software.at',
      '@_schemeID': 'EM',
    });
    const xml = renderXml(buildUblDocument(noIds, { profile: 'peppol' })).replace(
      '<cac:Party>',
      '<cac:Party><cbc:EndpointID schemeID="EM">a@b.at</cbc:EndpointID>',
    );
    expect(ruleIds(checkUblRules(xml, 'peppol'))).toContain('PEPPOL-EN16931-CL008');
  });

  it('XRechnung without buyer reference → BR-DE-15; Peppol without buyer and order reference → PEPPOL-EN16931-R003', () => {
    const m = ready(makeDocument(sellerDE, customerDE), { buyerReference: null });
    expect([...ruleIds(refusal(() => buildUblInvoice(m, { profile: 'xrechnung' })))]).toEqual(['BR-DE-15']);
    // Peppol (not between two German parties) is content with the order reference alone.
    const at = ready(makeDocument(sellerAT, customerAT), { buyerReference: null });
    expect(buildUblInvoice(at, { profile: 'peppol' })).toContain('<cbc:ID>PO-4711</cbc:ID>');
    expect([...ruleIds(refusal(() => buildUblInvoice({ ...at, orderReference: null }, { profile: 'peppol' })))]).toEqual(['PEPPOL-EN16931-R003']);
  });

  it('Peppol between two German parties applies the German rules (DE-R-*): payment instructions on credit notes, rate 0 for O, contact, BT-10', () => {
    const cn = ready(makeDocument(sellerDE, customerDE, { type: 'gutschrift', number: 'GS-1', relatedInvoiceNumber: 'RE-1' }));
    expect(parse(buildUblInvoice(cn, { profile: 'peppol' })).PaymentMeans.PaymentMeansCode).toBe('1');
    const o = ready(withCategories(sellerDE, customerDE, [['0', { taxCategory: 'notSubject' }]]));
    expect(parse(buildUblInvoice(o, { profile: 'peppol' })).TaxTotal.TaxSubtotal.TaxCategory.Percent).toBe('0');
    const m = ready(makeDocument(sellerDE, customerDE), { buyerReference: null });
    expect([...ruleIds(refusal(() => buildUblInvoice(m, { profile: 'peppol' })))]).toEqual(['DE-R-015']);
    const noPhone = { ...m, buyerReference: 'X', seller: { ...m.seller, phone: null } };
    expect([...ruleIds(refusal(() => buildUblInvoice(noPhone, { profile: 'peppol' })))]).toEqual(['DE-R-006']);
    // Not between two German parties: none of that.
    const at = ready(makeDocument(sellerAT, customerAT, { type: 'gutschrift', number: 'GS-1', relatedInvoiceNumber: 'RE-1' }));
    expect(parse(buildUblInvoice(at, { profile: 'peppol' })).PaymentMeans).toBeUndefined();
  });

  it('XRechnung without seller phone → BR-DE-6; without seller e-mail → BR-DE-7', () => {
    const m = ready(makeDocument(sellerDE, customerDE));
    const e = refusal(() => buildUblInvoice({ ...m, seller: { ...m.seller, phone: null, email: null } }, { profile: 'xrechnung' }));
    expect(ruleIds(e)).toEqual(new Set(['BR-DE-6', 'BR-DE-7']));
  });

  it('amounts that do not reconcile are refused with the EN 16931 rule ids', () => {
    const m = ready(makeDocument(sellerAT, customerAT));
    const e = refusal(() => buildUblInvoice({ ...m, totals: { ...m.totals, gross: m.totals.gross.plus('0.01') } }, { profile: 'peppol' }));
    expect(ruleIds(e)).toContain('BR-CO-15');
  });

  it('the UBL rules catch broken documents: currency, tax totals, empty elements, profile, dates', () => {
    const xml = buildUblInvoice(ready(usd()), { profile: 'peppol' });
    const check = (broken: string) => ruleIds(checkUblRules(broken, 'peppol'));
    expect(checkUblRules(xml, 'peppol')).toEqual([]);
    expect(check(xml.replace('<cbc:PayableAmount currencyID="USD">', '<cbc:PayableAmount currencyID="EUR">'))).toContain('PEPPOL-EN16931-R051');
    expect(check(xml.replace(/<cac:TaxTotal>\s*<cbc:TaxAmount currencyID="EUR">[^<]*<\/cbc:TaxAmount>\s*<\/cac:TaxTotal>/, ''))).toContain(
      'PEPPOL-EN16931-R054',
    );
    expect(check(xml.replace('<cbc:TaxCurrencyCode>EUR</cbc:TaxCurrencyCode>', '<cbc:TaxCurrencyCode>USD</cbc:TaxCurrencyCode>'))).toContain(
      'PEPPOL-EN16931-R005',
    );
    expect(check(xml.replace('<cbc:PaymentID>', '<cbc:Note/><cbc:PaymentID>'))).toContain('PEPPOL-EN16931-R008');
    expect(check(xml.replace('billing:01:1.0', 'billing:1:1.0'))).toContain('PEPPOL-EN16931-R007');
    expect(check(xml.replace('poacc:billing:3.0', 'poacc:billing:2.0'))).toContain('PEPPOL-EN16931-R004');
    expect(check(xml.replace('<cbc:IssueDate>2026-03-10', '<cbc:IssueDate>2026-02-30'))).toContain('PEPPOL-EN16931-F001');
    expect(check(xml.replace('<cbc:InvoiceTypeCode>380', '<cbc:InvoiceTypeCode>381'))).toContain('PEPPOL-EN16931-P0100');
    expect(check(xml.replace('schemeID="9914"', 'schemeID=""'))).toContain('BR-62');
    expect(check('<Order/>')).toEqual(new Set(['XML']));
    expect(check('<Invoice>')).toEqual(new Set(['XML']));
  });
});
