/**
 * The rule check for UBL documents. Our EN 16931 rules (../cii/en16931Rules.ts) read CII XML, not
 * the model, so the EN 16931 part runs on the CII rendering of the same model: both writers
 * serialise one model, the sums and category rules are the same. What only the UBL document can
 * show is checked on the UBL XML itself: the Peppol BIS 3.0 rules (PEPPOL-EN16931-*, ids and
 * wording of OpenPEPPOL's PEPPOL-EN16931-UBL.sch), the XRechnung 3.0 rules (BR-DE-*, KoSIT's
 * XRechnung-UBL-validation.sch) and the EN 16931 rules on the electronic address (BR-62, BR-63,
 * BR-CL-25), which the CII writer fills differently. Only the rules our data can break are here;
 * the XSD (tests) covers the syntax.
 */
import Decimal from 'decimal.js';
import { buildCiiDocument } from '../cii/ciiInvoice';
import type { EInvoiceModel } from '../cii/einvoiceModelTypes';
import { checkEn16931Document, type En16931Violation } from '../cii/en16931Rules';
import { CURRENCY_RE } from '../cii/rules/codeLists';
import { all, attr, blank, kids, one, parseForRules, text, textAt, type XNode } from '../cii/rules/xmlNodes';
import { UBL_PROFILES, type UblProfile } from './ublProfiles';

export type UblViolation = En16931Violation;

// Electronic Address Scheme codes: Peppol's list (PEPPOL-EN16931-CL008, no e-mail) and the CEF
// EAS list of EN 16931 (BR-CL-25, with EM = e-mail), as in the two Schematrons.
const PEPPOL_EAS = new Set(
  (
    '0002 0007 0009 0037 0060 0088 0096 0097 0106 0130 0135 0142 0151 0177 0183 0184 0188 0190 0191 0192 0193 0195 0196 0198 0199 0200 ' +
    '0201 0202 0204 0208 0209 0210 0211 0212 0213 0215 0216 0218 0221 0230 0235 9910 9913 9914 9915 9918 9919 9920 9922 9923 9924 9925 ' +
    '9926 9927 9928 9929 9930 9931 9932 9933 9934 9935 9936 9937 9938 9939 9940 9941 9942 9943 9944 9945 9946 9947 9948 9949 9950 9951 ' +
    '9952 9953 9957 9959 0147 0154 0158 0170 0194 0203 0205 0217 0225 0240'
  ).split(' '),
);
const CEF_EAS = new Set([...PEPPOL_EAS, ...'0219 0220 0244 0242 0245 0246 0248 AN AQ AS AU EM'.split(' ')]);

// PEPPOL-EN16931-P0100 / P0101: the type codes of process 01.
const PEPPOL_INVOICE_TYPES = new Set('71 80 82 84 102 218 219 326 331 380 382 383 384 386 388 393 395 553 575 623 780 817 870 875 876 877'.split(' '));
const PEPPOL_CREDIT_NOTE_TYPES = new Set('381 396 81 83 532'.split(' '));

const PROFILE_RE = /urn:fdc:peppol\.eu:2017:poacc:billing:([0-9]{2}):1\.0/;
const DATE_NAMES = new Set(['IssueDate', 'DueDate', 'TaxPointDate', 'StartDate', 'EndDate', 'ActualDeliveryDate']);
// PEPPOL-EN16931-R051: the amounts that must carry the document currency (BT-111 excepted).
const AMOUNT_NAMES = new Set([
  'Amount',
  'BaseAmount',
  'PriceAmount',
  'TaxableAmount',
  'LineExtensionAmount',
  'TaxExclusiveAmount',
  'TaxInclusiveAmount',
  'AllowanceTotalAmount',
  'ChargeTotalAmount',
  'PrepaidAmount',
  'PayableRoundingAmount',
  'PayableAmount',
]);

type Fail = (rule: string, message: string) => void;

interface Element {
  name: string;
  node: XNode;
  parent: string | undefined;
}

/** Every element of the document with its local name and its parent's, in document order. */
function elements(node: XNode, name: string, parent: string | undefined, out: Element[]): Element[] {
  out.push({ name, node, parent });
  for (const key of Object.keys(node)) {
    if (key.startsWith('@_') || key === '#text') continue;
    for (const child of kids(node, key)) elements(child, key, name, out);
  }
  return out;
}

const hasChildElements = (node: XNode) => Object.keys(node).some((k) => !k.startsWith('@_') && k !== '#text');

function endpointRules(root: XNode, profile: UblProfile, fail: Fail): void {
  for (const [who, bt, presence, schemeRule] of [
    ['Seller', 'BT-34', 'PEPPOL-EN16931-R020', 'BR-62'],
    ['Buyer', 'BT-49', 'PEPPOL-EN16931-R010', 'BR-63'],
  ] as const) {
    const party = one(root, who === 'Seller' ? 'AccountingSupplierParty/Party' : 'AccountingCustomerParty/Party');
    const endpoint = one(party, 'EndpointID');
    if (profile === 'peppol' && party && !endpoint) fail(presence, `${who} electronic address MUST be provided`);
    if (!endpoint) continue;
    const scheme = attr(endpoint, 'schemeID')?.trim();
    if (blank(scheme)) {
      fail(schemeRule, `The ${who} electronic address (${bt}) shall have a Scheme identifier.`);
      continue;
    }
    if (!CEF_EAS.has(scheme!)) fail('BR-CL-25', `Endpoint identifier scheme identifier ${scheme} MUST belong to the CEF EAS code list.`);
    else if (profile === 'peppol' && !PEPPOL_EAS.has(scheme!)) {
      fail('PEPPOL-EN16931-CL008', `Electronic address identifier scheme must be from the codelist "Electronic Address Identifier Scheme" (${scheme}).`);
    }
  }
}

function peppolRules(root: XNode, rootName: string, els: Element[], fail: Fail): void {
  const profileId = textAt(root, 'ProfileID')?.trim();
  if (profileId === undefined) fail('PEPPOL-EN16931-R001', 'Business process MUST be provided.');
  else if (!PROFILE_RE.test(profileId)) {
    fail('PEPPOL-EN16931-R007', "Business process MUST be in the format 'urn:fdc:peppol.eu:2017:poacc:billing:NN:1.0' where NN indicates the process number.");
  }
  if (!(textAt(root, 'CustomizationID')?.trim() ?? '').startsWith(UBL_PROFILES.peppol.customizationId)) {
    fail('PEPPOL-EN16931-R004', `Specification identifier MUST have the value '${UBL_PROFILES.peppol.customizationId}'.`);
  }
  if (kids(root, 'Note').length > 1 && !bothGerman(root)) {
    fail('PEPPOL-EN16931-R002', 'No more than one note is allowed on document level, unless both the buyer and seller are German organizations.');
  }
  if (blank(textAt(root, 'BuyerReference')) && blank(textAt(root, 'OrderReference/ID'))) {
    fail('PEPPOL-EN16931-R003', 'A buyer reference or purchase order reference MUST be provided.');
  }
  const taxTotals = kids(root, 'TaxTotal');
  const withSubtotals = taxTotals.filter((t) => kids(t, 'TaxSubtotal').length > 0);
  const taxCurrency = textAt(root, 'TaxCurrencyCode')?.trim();
  const currency = textAt(root, 'DocumentCurrencyCode')?.trim();
  if (withSubtotals.length !== 1) fail('PEPPOL-EN16931-R053', 'Only one tax total with tax subtotals MUST be provided.');
  if (taxTotals.length - withSubtotals.length !== (taxCurrency ? 1 : 0)) {
    fail('PEPPOL-EN16931-R054', 'Only one tax total without tax subtotals MUST be provided when tax currency code is provided.');
  }
  if (taxCurrency) {
    if (taxCurrency === currency) fail('PEPPOL-EN16931-R005', 'VAT accounting currency code MUST be different from invoice currency code when provided.');
    // The sign of each total VAT amount, read as a decimal (never a float); NaN when absent or not a number.
    const taxSign = (code: string | undefined) => {
      const v = text(all(root, 'TaxTotal/TaxAmount').find((a) => attr(a, 'currencyID') === code));
      return v && /^-?\d+(\.\d+)?$/.test(v.trim()) ? new Decimal(v.trim()).comparedTo(0) : Number.NaN;
    };
    const [inCurrency, inTaxCurrency] = [taxSign(currency), taxSign(taxCurrency)];
    if (!((inCurrency <= 0 && inTaxCurrency <= 0) || (inCurrency >= 0 && inTaxCurrency >= 0))) {
      fail('PEPPOL-EN16931-R055', 'Invoice total VAT amount and Invoice total VAT amount in accounting currency MUST have the same operational sign');
    }
  }
  for (const e of els) {
    const isTaxAmount =
      e.name === 'TaxAmount' && (e.parent === 'TaxSubtotal' || (e.parent === 'TaxTotal' && withSubtotals.some((t) => kids(t, 'TaxAmount')[0] === e.node)));
    if (AMOUNT_NAMES.has(e.name) || isTaxAmount) {
      if (attr(e.node, 'currencyID') !== currency) {
        fail(
          'PEPPOL-EN16931-R051',
          `All currencyID attributes must have the same value as the invoice currency code (BT-5), except for the invoice total VAT amount in accounting currency (BT-111) (${e.name}).`,
        );
      }
    }
    if (AMOUNT_NAMES.has(e.name) || e.name === 'TaxAmount') {
      const code = attr(e.node, 'currencyID')?.trim();
      if (!code || !CURRENCY_RE.test(code)) fail('PEPPOL-EN16931-CL007', `Currency code must be according to ISO 4217:2005 (${e.name}).`);
    }
    if (DATE_NAMES.has(e.name)) {
      const d = text(e.node)?.trim() ?? '';
      const parsed = new Date(`${d}T00:00:00Z`);
      if (!/^\d{4}-\d{2}-\d{2}$/.test(d) || Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== d) {
        fail('PEPPOL-EN16931-F001', `A date MUST be formatted YYYY-MM-DD (${e.name} "${d}").`);
      }
    }
  }
  const typeCode = textAt(root, rootName === 'Invoice' ? 'InvoiceTypeCode' : 'CreditNoteTypeCode')?.trim() ?? '';
  const profile = profileId?.match(PROFILE_RE)?.[1];
  if (rootName === 'Invoice' && profile === '01' && !PEPPOL_INVOICE_TYPES.has(typeCode)) {
    fail('PEPPOL-EN16931-P0100', 'Invoice type code MUST be set according to the profile.');
  }
  if (rootName === 'CreditNote' && profile === '01' && !PEPPOL_CREDIT_NOTE_TYPES.has(typeCode)) {
    fail('PEPPOL-EN16931-P0101', 'Credit note type code MUST be set according to the profile.');
  }
  if (bothGerman(root)) germanRules(root, rootName, 'peppol', fail);
}

/**
 * The German rules: XRechnung's BR-DE-* (KoSIT, German wording) and the same checks in Peppol BIS
 * for a seller and buyer both in Germany (DE-R-*, OpenPEPPOL, English wording).
 */
const GERMAN_RULES = {
  paymentMeans: [
    'BR-DE-1',
    'DE-R-001',
    'Eine Rechnung (INVOICE) muss Angaben zu "PAYMENT INSTRUCTIONS" (BG-16) enthalten.',
    'An invoice shall contain information on "PAYMENT INSTRUCTIONS" (BG-16).',
  ],
  contact: ['BR-DE-2', 'DE-R-002', 'Die Gruppe "SELLER CONTACT" (BG-6) muss übermittelt werden.', 'The group "SELLER CONTACT" (BG-6) shall be provided.'],
  sellerCity: ['BR-DE-3', 'DE-R-003', 'Das Element "Seller city" (BT-37) muss übermittelt werden.', 'The element "Seller city" (BT-37) shall be provided.'],
  sellerPostcode: [
    'BR-DE-4',
    'DE-R-004',
    'Das Element "Seller post code" (BT-38) muss übermittelt werden.',
    'The element "Seller post code" (BT-38) shall be provided.',
  ],
  contactName: [
    'BR-DE-5',
    'DE-R-005',
    'Das Element "Seller contact point" (BT-41) muss übermittelt werden.',
    'The element "Seller contact point" (BT-41) shall be provided.',
  ],
  contactPhone: [
    'BR-DE-6',
    'DE-R-006',
    'Das Element "Seller contact telephone number" (BT-42) muss übermittelt werden.',
    'The element "Seller contact telephone number" (BT-42) shall be provided.',
  ],
  contactEmail: [
    'BR-DE-7',
    'DE-R-007',
    'Das Element "Seller contact email address" (BT-43) muss übermittelt werden.',
    'The element "Seller contact email address" (BT-43) shall be provided.',
  ],
  buyerCity: ['BR-DE-8', 'DE-R-008', 'Das Element "Buyer city" (BT-52) muss übermittelt werden.', 'The element "Buyer city" (BT-52) shall be provided.'],
  buyerPostcode: [
    'BR-DE-9',
    'DE-R-009',
    'Das Element "Buyer post code" (BT-53) muss übermittelt werden.',
    'The element "Buyer post code" (BT-53) shall be provided.',
  ],
  deliverToCity: [
    'BR-DE-10',
    'DE-R-010',
    'Das Element "Deliver to city" (BT-77) muss übermittelt werden, wenn die Gruppe "DELIVER TO ADDRESS" (BG-15) übermittelt wird.',
    'The element "Deliver to city" (BT-77) shall be provided if the group "DELIVER TO ADDRESS" (BG-15) is delivered.',
  ],
  deliverToPostcode: [
    'BR-DE-11',
    'DE-R-011',
    'Das Element "Deliver to post code" (BT-78) muss übermittelt werden, wenn die Gruppe "DELIVER TO ADDRESS" (BG-15) übermittelt wird.',
    'The element "Deliver to post code" (BT-78) shall be provided if the group "DELIVER TO ADDRESS" (BG-15) is delivered.',
  ],
  rate: [
    'BR-DE-14',
    'DE-R-014',
    'Das Element "VAT category rate" (BT-119) muss übermittelt werden.',
    'The element "VAT category rate" (BT-119) shall be provided.',
  ],
  buyerReference: [
    'BR-DE-15',
    'DE-R-015',
    'Das Element "Buyer reference" (BT-10) muss übermittelt werden.',
    'The element "Buyer reference" (BT-10) shall be provided.',
  ],
  sellerTaxId: [
    'BR-DE-16',
    'DE-R-016',
    'Wenn in einer Rechnung die Steuercodes S, Z, E, AE, K, G, L oder M verwendet werden, muss mindestens eines der Elemente "Seller VAT identifier" (BT-31), "Seller tax registration identifier" (BT-32) oder "SELLER TAX REPRESENTATIVE PARTY" (BG-11) übermittelt werden.',
    'If one of the VAT codes S, Z, E, AE, K, G, L, or M is used, an invoice shall contain at least one of the following elements: "Seller VAT identifier" (BT-31) or "Seller tax registration identifier" (BT-32) or "SELLER TAX REPRESENTATIVE PARTY" (BG-11).',
  ],
  creditTransfer: [
    'BR-DE-23-a',
    'DE-R-023-1',
    'Wenn BT-81 "Payment means type code" einen Schlüssel für Überweisungen enthält (30, 58), muss BG-17 "CREDIT TRANSFER" übermittelt werden.',
    'If "Payment means type code" (BT-81) contains a code for credit transfer (30, 58), "CREDIT TRANSFER" (BG-17) shall be provided.',
  ],
} as const satisfies Record<string, readonly [string, string, string, string]>;

/** Whether Peppol's German rules (DE-R-*) apply: seller and buyer postal addresses in Germany. */
function bothGerman(root: XNode): boolean {
  const country = (path: string) => textAt(root, `${path}/Party/PostalAddress/Country/IdentificationCode`)?.trim().toUpperCase();
  return country('AccountingSupplierParty') === 'DE' && country('AccountingCustomerParty') === 'DE';
}

function germanRules(root: XNode, rootName: string, ids: 'xrechnung' | 'peppol', fail: Fail): void {
  const de = (key: keyof typeof GERMAN_RULES) => {
    const [br, deR, german, english] = GERMAN_RULES[key];
    if (ids === 'xrechnung') fail(br, german);
    else fail(deR, english);
  };
  if (kids(root, 'PaymentMeans').length === 0) de('paymentMeans');
  if (blank(textAt(root, 'BuyerReference'))) de('buyerReference');
  const seller = one(root, 'AccountingSupplierParty/Party');
  const contact = one(seller, 'Contact');
  if (!contact) de('contact');
  else {
    if (blank(textAt(contact, 'Name'))) de('contactName');
    if (blank(textAt(contact, 'Telephone'))) de('contactPhone');
    if (blank(textAt(contact, 'ElectronicMail'))) de('contactEmail');
  }
  const sellerAddress = one(seller, 'PostalAddress');
  if (sellerAddress && blank(textAt(sellerAddress, 'CityName'))) de('sellerCity');
  if (sellerAddress && blank(textAt(sellerAddress, 'PostalZone'))) de('sellerPostcode');
  const buyerAddress = one(root, 'AccountingCustomerParty/Party/PostalAddress');
  if (buyerAddress && blank(textAt(buyerAddress, 'CityName'))) de('buyerCity');
  if (buyerAddress && blank(textAt(buyerAddress, 'PostalZone'))) de('buyerPostcode');
  const deliverTo = one(root, 'Delivery/DeliveryLocation/Address');
  if (deliverTo && blank(textAt(deliverTo, 'CityName'))) de('deliverToCity');
  if (deliverTo && blank(textAt(deliverTo, 'PostalZone'))) de('deliverToPostcode');
  if (all(root, 'TaxTotal/TaxSubtotal').some((s) => blank(textAt(s, 'TaxCategory/Percent')))) de('rate');
  const lineName = rootName === 'Invoice' ? 'InvoiceLine' : 'CreditNoteLine';
  const codes = all(root, `${lineName}/Item/ClassifiedTaxCategory/ID`).map((c) => text(c)?.trim());
  if (codes.some((c) => ['S', 'Z', 'E', 'AE', 'K', 'G', 'L', 'M'].includes(c ?? '')) && all(seller, 'PartyTaxScheme/CompanyID').every((c) => blank(text(c)))) {
    de('sellerTaxId');
  }
  if (kids(root, 'PaymentMeans').some((pm) => ['30', '58'].includes(textAt(pm, 'PaymentMeansCode')?.trim() ?? '') && !one(pm, 'PayeeFinancialAccount'))) {
    de('creditTransfer');
  }
}

/**
 * The UBL-only rules on a parsed UBL Invoice or CreditNote root: EN 16931's electronic address
 * rules always, Peppol BIS 3.0 (with its DE-R-* between German parties) or XRechnung's BR-DE-*
 * when `profile` names one. Our outputs (checkUblRules) and inbound documents
 * (../inbound/validate.ts) run this same code; only our outputs must carry the exact XRechnung
 * identifier (BR-DE-21, `ownOutput`), an inbound document may declare the extension or 2.x.
 */
export function checkUblTree(root: XNode, rootName: string, profile: UblProfile | null, fail: Fail, ownOutput = false): void {
  const els = elements(root, rootName, undefined, []);
  if (profile === 'peppol') {
    for (const e of els) {
      if (!hasChildElements(e.node) && blank(text(e.node))) fail('PEPPOL-EN16931-R008', `Document MUST not contain empty elements (${e.name}).`);
    }
  }
  endpointRules(root, profile ?? 'xrechnung', fail);
  if (profile === 'peppol') peppolRules(root, rootName, els, fail);
  if (profile === 'xrechnung') {
    // BR-DE-21 is a warning in the Schematron; we only ever write the exact identifier.
    if (ownOutput && textAt(root, 'CustomizationID')?.trim() !== UBL_PROFILES.xrechnung.customizationId) {
      fail('BR-DE-21', 'Das Element "Specification identifier" (BT-24) soll syntaktisch der Kennung des Standards XRechnung entsprechen.');
    }
    germanRules(root, rootName, 'xrechnung', fail);
  }
}

/**
 * The UBL-only rules of the profile on a UBL 2.1 Invoice or CreditNote (see the module comment).
 * Returns one entry per failed rule instance, messages prefixed with "[rule] ".
 */
export function checkUblRules(xml: string | Buffer, profile: UblProfile): UblViolation[] {
  const source = typeof xml === 'string' ? xml : xml.toString('utf8');
  const out: UblViolation[] = [];
  const fail: Fail = (rule, message) => out.push({ rule, message: `[${rule}] ${message}` });
  const read = parseForRules(source);
  if ('notWellFormed' in read) {
    fail('XML', read.notWellFormed);
    return out;
  }
  const parsed = read.tree;
  const rootName = ['Invoice', 'CreditNote'].find((n) => kids(parsed, n).length > 0);
  if (!rootName) {
    fail('XML', 'Root element is neither Invoice nor CreditNote');
    return out;
  }
  checkUblTree(kids(parsed, rootName)[0], rootName, profile, fail, true);
  return out;
}

/**
 * Everything a UBL document of the model must pass: the EN 16931 rules (on the CII document of
 * the same model, as written: ../cii/rules/writtenTree.ts) and the UBL rules of the profile on the
 * document itself.
 */
export function checkUblInvoice(model: EInvoiceModel, xml: string | Buffer, profile: UblProfile): UblViolation[] {
  return [...checkEn16931Document(buildCiiDocument(model)), ...checkUblRules(xml, profile)];
}
