/**
 * The validation report of inbound documents (shared/formats/inbound/validate.ts): a clean
 * hand-made UBL and our own CII output have no findings; each broken variant breaks one rule
 * family and is reported with its official rule id and the Schematron's severity.
 */
import { describe, expect, it } from 'vitest';
import { buildCiiXml } from '../../../shared/formats/cii/ciiInvoice';
import { buildEbInterfaceXml } from '../../../shared/formats/ebinterface/ebInterfaceInvoice';
import { readEInvoice } from '../../../shared/formats/inbound/readEInvoice';
import { validateEInvoice, validationReport } from '../../../shared/formats/inbound/validate';
import { makeDocumentInput } from '../pdf/fixtures';

const EN16931 = 'urn:cen.eu:en16931:2017';
const XRECHNUNG = 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0';
const XRECHNUNG_EXTENSION = `${XRECHNUNG}#conformant#urn:xeinkauf.de:kosit:extension:xrechnung_3.0`;
const PEPPOL = 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0';

interface UblOptions {
  customizationId?: string;
  profileId?: string | null;
  typeCode?: string;
  currency?: string;
  sellerName?: string | null;
  sellerCountry?: string;
  buyerVat?: boolean;
  unit?: string;
  category?: string;
  rate?: string | null;
  exemption?: string;
  net?: string;
  tax?: string;
  taxExclusive?: string;
  payable?: string;
  thirdParty?: string;
  dateBeforeId?: boolean;
}

/** A small UBL invoice that passes EN 16931, XRechnung and Peppol rules unless told otherwise. */
function ubl(o: UblOptions = {}): Buffer {
  const net = o.net ?? '100.00';
  const tax = o.tax ?? '19.00';
  const category = o.category ?? 'S';
  const rate = o.rate === undefined ? '19' : o.rate;
  const percent = rate === null ? '' : `<cbc:Percent>${rate}</cbc:Percent>`;
  const exemption = o.exemption ? `<cbc:TaxExemptionReason>${o.exemption}</cbc:TaxExemptionReason>` : '';
  const gross = (Number(net) + Number(tax)).toFixed(2);
  const address = (city: string, zip: string, country: string) =>
    `<cac:PostalAddress><cbc:StreetName>Hauptstr. 1</cbc:StreetName><cbc:CityName>${city}</cbc:CityName><cbc:PostalZone>${zip}</cbc:PostalZone><cac:Country><cbc:IdentificationCode>${country}</cbc:IdentificationCode></cac:Country></cac:PostalAddress>`;
  const id = '<cbc:ID>R-1</cbc:ID>';
  const date = '<cbc:IssueDate>2026-11-02</cbc:IssueDate>';
  return Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:CustomizationID>${o.customizationId ?? XRECHNUNG}</cbc:CustomizationID>
  ${o.profileId === null ? '' : `<cbc:ProfileID>${o.profileId ?? 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0'}</cbc:ProfileID>`}
  ${o.dateBeforeId ? date + id : id + date}
  <cbc:DueDate>2026-11-30</cbc:DueDate>
  <cbc:InvoiceTypeCode>${o.typeCode ?? '380'}</cbc:InvoiceTypeCode>
  <cbc:DocumentCurrencyCode>${o.currency ?? 'EUR'}</cbc:DocumentCurrencyCode>
  <cbc:BuyerReference>04011000-12345-03</cbc:BuyerReference>
  <cac:AccountingSupplierParty><cac:Party>
    <cbc:EndpointID schemeID="9930">DE123456789</cbc:EndpointID>
    ${address('Berlin', '10115', o.sellerCountry ?? 'DE')}
    <cac:PartyTaxScheme><cbc:CompanyID>DE123456789</cbc:CompanyID><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme>
    <cac:PartyLegalEntity>${o.sellerName === null ? '' : `<cbc:RegistrationName>${o.sellerName ?? 'Seller GmbH'}</cbc:RegistrationName>`}</cac:PartyLegalEntity>
    <cac:Contact><cbc:Name>Anna</cbc:Name><cbc:Telephone>+49 30 1234</cbc:Telephone><cbc:ElectronicMail>anna@example.com</cbc:ElectronicMail></cac:Contact>
  </cac:Party></cac:AccountingSupplierParty>
  <cac:AccountingCustomerParty><cac:Party>
    <cbc:EndpointID schemeID="9930">DE987654321</cbc:EndpointID>
    ${address('Potsdam', '14467', 'DE')}
    ${o.buyerVat === false ? '' : '<cac:PartyTaxScheme><cbc:CompanyID>DE987654321</cbc:CompanyID><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme>'}
    <cac:PartyLegalEntity><cbc:RegistrationName>Buyer AG</cbc:RegistrationName></cac:PartyLegalEntity>
  </cac:Party></cac:AccountingCustomerParty>
  <cac:PaymentMeans><cbc:PaymentMeansCode>58</cbc:PaymentMeansCode><cac:PayeeFinancialAccount><cbc:ID>DE02120300000000202051</cbc:ID></cac:PayeeFinancialAccount></cac:PaymentMeans>
  ${o.thirdParty ? `<cac:PrepaidPayment><cbc:PaidAmount currencyID="EUR">${o.thirdParty}</cbc:PaidAmount></cac:PrepaidPayment>` : ''}
  <cac:TaxTotal>
    <cbc:TaxAmount currencyID="EUR">${tax}</cbc:TaxAmount>
    <cac:TaxSubtotal>
      <cbc:TaxableAmount currencyID="EUR">${net}</cbc:TaxableAmount>
      <cbc:TaxAmount currencyID="EUR">${tax}</cbc:TaxAmount>
      <cac:TaxCategory><cbc:ID>${category}</cbc:ID>${percent}${exemption}<cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:TaxCategory>
    </cac:TaxSubtotal>
  </cac:TaxTotal>
  <cac:LegalMonetaryTotal>
    <cbc:LineExtensionAmount currencyID="EUR">${net}</cbc:LineExtensionAmount>
    <cbc:TaxExclusiveAmount currencyID="EUR">${o.taxExclusive ?? net}</cbc:TaxExclusiveAmount>
    <cbc:TaxInclusiveAmount currencyID="EUR">${gross}</cbc:TaxInclusiveAmount>
    <cbc:PayableAmount currencyID="EUR">${o.payable ?? gross}</cbc:PayableAmount>
  </cac:LegalMonetaryTotal>
  <cac:InvoiceLine>
    <cbc:ID>1</cbc:ID>
    <cbc:InvoicedQuantity unitCode="${o.unit ?? 'C62'}">1</cbc:InvoicedQuantity>
    <cbc:LineExtensionAmount currencyID="EUR">${net}</cbc:LineExtensionAmount>
    <cac:Item><cbc:Name>Beratung</cbc:Name><cac:ClassifiedTaxCategory><cbc:ID>${category}</cbc:ID>${percent}<cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:ClassifiedTaxCategory></cac:Item>
    <cac:Price><cbc:PriceAmount currencyID="EUR">${net}</cbc:PriceAmount></cac:Price>
  </cac:InvoiceLine>
</Invoice>`);
}

async function report(bytes: Buffer) {
  const r = await readEInvoice(bytes, 'application/xml');
  if (!r.ok) throw new Error(r.reason);
  return validateEInvoice(r);
}
const rules = async (bytes: Buffer) => (await report(bytes)).map((f) => `${f.severity} ${f.rule}`);

describe('validateEInvoice', () => {
  it('finds nothing in a clean document, under each declared profile', async () => {
    for (const customizationId of [EN16931, XRECHNUNG, PEPPOL]) expect(await report(ubl({ customizationId }))).toEqual([]);
    expect(await report(Buffer.from(buildCiiXml(makeDocumentInput())))).toEqual([]);
  });

  it('EN 16931 core rules (BR-01…BR-65): a missing seller name is BR-06, fatal', async () => {
    const findings = await report(ubl({ sellerName: null }));
    expect(findings).toEqual([{ rule: 'BR-06', message: expect.stringContaining('Seller name (BT-27)'), severity: 'fatal' }]);
  });

  it('BR-CO: totals that do not add up name the rule', async () => {
    expect(await rules(ubl({ taxExclusive: '90.00' }))).toContain('fatal BR-CO-13');
  });

  it('VAT category rules (BR-S/E/AE…): an exempt line without exemption reason, reverse charge without buyer VAT ID', async () => {
    expect(await rules(ubl({ category: 'E', rate: '0', tax: '0.00' }))).toEqual(['fatal BR-E-10']);
    expect(await rules(ubl({ category: 'E', rate: '0', tax: '0.00', exemption: 'Kleinunternehmer' }))).toEqual([]);
    expect(await rules(ubl({ category: 'AE', rate: '0', tax: '0.00', exemption: 'Reverse charge', buyerVat: false, customizationId: EN16931 }))).toEqual([
      'fatal BR-AE-02',
    ]);
  });

  it('code lists (BR-CL): type code, currency, country; a unit outside our subset of Rec 20 is only a warning', async () => {
    expect(await rules(ubl({ typeCode: '999' }))).toContain('fatal BR-CL-01');
    expect(await rules(ubl({ currency: 'eur' }))).toContain('fatal BR-CL-04');
    expect(await rules(ubl({ sellerCountry: 'XX', customizationId: EN16931 }))).toContain('fatal BR-CL-14');
    expect(await rules(ubl({ unit: 'ZZQ' }))).toEqual(['warning BR-CL-23']);
  });

  it('XRechnung BR-DE-* only when BT-24 declares XRechnung, with the requirement (not our settings hint) as message', async () => {
    const cii = buildCiiXml(makeDocumentInput());
    expect(await rules(Buffer.from(cii))).not.toContainEqual(expect.stringContaining('BR-DE-'));
    const asXrechnung = cii.replace(/(<ram:GuidelineSpecifiedDocumentContextParameter>\s*<ram:ID>)[^<]*/, `$1${XRECHNUNG}`);
    const findings = await report(Buffer.from(asXrechnung));
    const de = findings.filter((f) => f.rule.startsWith('BR-DE-'));
    expect(de.length).toBeGreaterThan(0);
    for (const f of de) {
      expect(f.severity).toBe('fatal');
      expect(f.message).not.toMatch(/api\/settings|set /);
    }
    // The UBL side: a German invoice without buyer reference.
    expect(
      await rules(
        Buffer.from(
          ubl()
            .toString()
            .replace(/<cbc:BuyerReference>[^<]*<\/cbc:BuyerReference>/, ''),
        ),
      ),
    ).toEqual(['fatal BR-DE-15']);
  });

  it('Peppol rules only when BT-24 declares Peppol BIS 3.0', async () => {
    expect(await rules(ubl({ customizationId: PEPPOL, profileId: null }))).toEqual(['fatal PEPPOL-EN16931-R001']);
    expect(await rules(ubl({ customizationId: EN16931, profileId: null }))).toEqual([]);
  });

  it('XRechnung extension: third-party payments count into BT-115 (KoSIT extension scenario), not so in the CIUS', async () => {
    const withThirdParty = { thirdParty: '10.00', payable: '129.00' };
    expect(await rules(ubl({ ...withThirdParty, customizationId: XRECHNUNG_EXTENSION }))).toEqual([]);
    expect(await rules(ubl({ ...withThirdParty, customizationId: XRECHNUNG_EXTENSION, payable: '130.00' }))).toEqual(['fatal BR-CO-16']);
    expect(await rules(ubl({ ...withThirdParty, customizationId: XRECHNUNG }))).toEqual(['fatal BR-CO-16']);
  });

  it('schema order (X-SCHEMA): IssueDate before ID in UBL; a cancelled ebInterface document without its number', async () => {
    const findings = await report(ubl({ dateBeforeId: true }));
    expect(findings).toEqual([{ rule: 'X-SCHEMA', message: 'Invoice: element ID must come before IssueDate (schema order)', severity: 'fatal' }]);
    const eb = buildEbInterfaceXml(makeDocumentInput());
    expect(await report(Buffer.from(eb))).toEqual([]);
    const swapped = eb.replace(/(<InvoiceNumber>[^<]*<\/InvoiceNumber>)(\s*)(<InvoiceDate>[^<]*<\/InvoiceDate>)/, '$3$2$1');
    expect(swapped).not.toBe(eb);
    expect(await rules(Buffer.from(swapped))).toEqual(['fatal X-SCHEMA']);
  });

  it('an unknown specification identifier (X-PROFILE) is fatal; below EN 16931 (BASIC WL) no EN 16931 rule applies', async () => {
    expect(await rules(ubl({ customizationId: 'urn:cen.eu:en16931:2017:compliant:something' }))).toEqual(['fatal X-PROFILE']);
    expect(await rules(ubl({ customizationId: 'urn:factur-x.eu:1p0:basicwl', sellerName: null }))).toEqual([]);
  });

  it('validationReport: fatal findings and reconcile problems are errors (valid: false), warnings are kept as text', async () => {
    const r = await readEInvoice(ubl({ sellerName: null, unit: 'ZZQ' }), 'application/xml');
    if (!r.ok) throw new Error(r.reason);
    const out = validationReport(r, [{ rule: 'BR-CO-15', message: 'BT-112: stated 1, computed 2' }]);
    expect(out.valid).toBe(false);
    expect(out.errors.map((e) => e.rule)).toEqual(['BR-CO-15', 'BR-06']);
    expect(out.warnings).toEqual([expect.stringMatching(/^BR-CL-23: Unit code ZZQ/)]);
  });
});
