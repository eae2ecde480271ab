/**
 * OASIS UBL 2.1 writer for the EN 16931 model (toEInvoiceModel), in two profiles: Peppol BIS
 * Billing 3.0 and XRechnung 3.0 (UBL syntax). Invoice-2 for invoices, CreditNote-2 for credit
 * notes. Element order follows the UBL 2.1 XSD sequences; each builder names the XSD type it
 * implements. Same content as the CII writer (../cii/ciiInvoice.ts) so both syntaxes say the same;
 * every document passes `checkUblInvoice` before it is returned.
 */
import type { DocumentInput } from '../../domain/invoiceView';
import { el, optionalEl, renderXml, type XmlElement } from '../xml';
import { paymentTermsText, toEInvoiceModel } from '../cii/einvoiceModel';
import type { EInvoiceLine, EInvoiceModel, EInvoiceParty, EInvoiceTaxGroup } from '../cii/einvoiceModelTypes';
import { EInvoiceExportError } from '../cii/exportError';
import { formatAmount, formatDecimal, formatPrice } from '../cii/numberFormat';
import { checkUblInvoice } from './ublRules';
import { UBL_NAMESPACES, UBL_PROFILES, type UblProfile } from './ublProfiles';

export { checkUblInvoice, checkUblRules } from './ublRules';
export { UBL_NAMESPACES, UBL_PROFILES, type UblProfile } from './ublProfiles';

export interface UblOptions {
  profile: UblProfile;
}

/** UNTDID 1001: 380 commercial invoice, 381 credit note. */
const TYPE_CODE = { invoice: '380', creditNote: '381' } as const;

/** Every amount carries the document currency (PEPPOL-EN16931-R051), BT-111 its own. */
const amount = (name: string, value: Parameters<typeof formatAmount>[0], currency: string) => el(name, { currencyID: currency }, formatAmount(value));

/**
 * BT-34 / BT-49. The model's Peppol participant id; XRechnung also accepts an e-mail address
 * (EAS "EM"), Peppol does not (PEPPOL-EN16931-CL008), so without an id the Peppol document has no
 * EndpointID and is refused (PEPPOL-EN16931-R010/R020).
 */
function endpointId(p: EInvoiceParty, profile: UblProfile): XmlElement | null {
  if (p.electronicAddress) return el('cbc:EndpointID', { schemeID: p.electronicAddress.scheme }, p.electronicAddress.id);
  if (profile === 'xrechnung' && p.email) return el('cbc:EndpointID', { schemeID: 'EM' }, p.email);
  return null;
}

// AddressType: StreetName, AdditionalStreetName, CityName, PostalZone, AddressLine, Country
function postalAddress(p: EInvoiceParty, tag = 'cac:PostalAddress'): XmlElement {
  const [street, additional, ...rest] = p.address.lines;
  return el(
    tag,
    optionalEl('cbc:StreetName', street),
    optionalEl('cbc:AdditionalStreetName', additional),
    optionalEl('cbc:CityName', p.address.city),
    optionalEl('cbc:PostalZone', p.address.postcode),
    rest.length > 0 && el('cac:AddressLine', el('cbc:Line', rest.join(', '))),
    el('cac:Country', el('cbc:IdentificationCode', p.address.country)),
  );
}

// PartyTaxSchemeType: CompanyID, TaxScheme
const partyTaxScheme = (companyId: string, scheme: 'VAT' | 'FC') =>
  el('cac:PartyTaxScheme', el('cbc:CompanyID', companyId), el('cac:TaxScheme', el('cbc:ID', scheme)));

/**
 * The German rules apply: XRechnung always (BR-DE-*), Peppol BIS when seller and buyer are both in
 * Germany (its DE-R-* rules, the same checks).
 */
function germanRules(m: EInvoiceModel, profile: UblProfile): boolean {
  return profile === 'xrechnung' || (m.seller.address.country === 'DE' && m.buyer.address.country === 'DE');
}

// ContactType: Name, Telephone, ElectronicMail. The German rules require the seller contact
// (BR-DE-2/DE-R-002, BR-DE-5/DE-R-005): without a person the seller itself is the contact point.
function contact(p: EInvoiceParty, role: 'seller' | 'buyer', german: boolean): XmlElement | null {
  const name = p.contactName ?? (role === 'seller' && german ? p.name : null);
  const phone = role === 'seller' || p.contactName ? p.phone : null;
  const email = role === 'seller' || p.contactName ? p.email : null;
  if (!name && !phone && !email) return null;
  return el('cac:Contact', optionalEl('cbc:Name', name), optionalEl('cbc:Telephone', phone), optionalEl('cbc:ElectronicMail', email));
}

// PartyType: EndpointID, PartyIdentification, PartyName, PostalAddress, PartyTaxScheme*, PartyLegalEntity, Contact
function party(p: EInvoiceParty, role: 'seller' | 'buyer', profile: UblProfile, notSubject: boolean, german: boolean): XmlElement {
  // Not subject to VAT: no VAT identifiers (BR-O-02); the seller is identified by its VAT number
  // or tax number as Seller identifier (BT-29), which BR-CO-26 asks for, as in the CII writer.
  const sellerId = notSubject && role === 'seller' ? (p.vatId ?? p.taxNumber) : null;
  return el(
    'cac:Party',
    endpointId(p, profile),
    sellerId && el('cac:PartyIdentification', el('cbc:ID', sellerId)),
    postalAddress(p),
    p.vatId && !notSubject ? partyTaxScheme(p.vatId, 'VAT') : null,
    // BT-32 (the seller's tax number): a tax scheme other than VAT.
    role === 'seller' && p.taxNumber ? partyTaxScheme(p.taxNumber, 'FC') : null,
    el('cac:PartyLegalEntity', el('cbc:RegistrationName', p.name)),
    contact(p, role, german),
  );
}

// TaxCategoryType: ID, Percent, TaxExemptionReasonCode, TaxExemptionReason, TaxScheme
function taxCategory(
  tag: string,
  category: string,
  rate: EInvoiceLine['taxRate'],
  reason?: { code: string | null; text: string | null; rateForO: boolean },
): XmlElement {
  return el(
    tag,
    el('cbc:ID', category),
    // Not subject to VAT has no rate on the line (BR-O-05), nor in the breakdown unless the
    // German rules require BT-119 in every breakdown group (BR-DE-14, DE-R-014): there it is 0.
    (category !== 'O' || reason?.rateForO) && el('cbc:Percent', formatDecimal(rate)),
    optionalEl('cbc:TaxExemptionReasonCode', reason?.code),
    optionalEl('cbc:TaxExemptionReason', reason?.text),
    el('cac:TaxScheme', el('cbc:ID', 'VAT')),
  );
}

// TaxSubtotalType: TaxableAmount, TaxAmount, TaxCategory
function taxSubtotal(g: EInvoiceTaxGroup, currency: string, german: boolean): XmlElement {
  return el(
    'cac:TaxSubtotal',
    amount('cbc:TaxableAmount', g.basis, currency),
    amount('cbc:TaxAmount', g.tax, currency),
    taxCategory('cac:TaxCategory', g.category, g.rate, { code: g.exemptionReasonCode, text: g.exemptionReason, rateForO: german }),
  );
}

// InvoiceLineType / CreditNoteLineType: ID, InvoicedQuantity|CreditedQuantity, LineExtensionAmount, Item, Price
function line(m: EInvoiceModel, l: EInvoiceLine): XmlElement {
  const invoice = m.kind === 'invoice';
  return el(
    invoice ? 'cac:InvoiceLine' : 'cac:CreditNoteLine',
    el('cbc:ID', String(l.position)),
    el(invoice ? 'cbc:InvoicedQuantity' : 'cbc:CreditedQuantity', { unitCode: l.unitCode }, formatDecimal(l.quantity)),
    amount('cbc:LineExtensionAmount', l.netAmount, m.currency),
    // ItemType: Description, Name, ClassifiedTaxCategory
    el('cac:Item', optionalEl('cbc:Description', l.description), el('cbc:Name', l.name), taxCategory('cac:ClassifiedTaxCategory', l.category, l.taxRate)),
    // PriceType: PriceAmount
    el('cac:Price', el('cbc:PriceAmount', { currencyID: m.currency }, formatPrice(l.unitPrice))),
  );
}

// PaymentMeansType: PaymentMeansCode, PaymentID, PayeeFinancialAccount (ID, Name, FinancialInstitutionBranch)
function paymentMeans(m: EInvoiceModel, german: boolean): XmlElement | null {
  // A credit note is paid by the seller to the buyer: the seller's account is no payment
  // instruction for it. The German rules still require BG-16 (BR-DE-1, DE-R-001): "instrument
  // not defined".
  if (m.kind === 'creditNote') return german ? el('cac:PaymentMeans', el('cbc:PaymentMeansCode', '1')) : null;
  if (!m.iban) return el('cac:PaymentMeans', el('cbc:PaymentMeansCode', '1'), el('cbc:PaymentID', m.number));
  return el(
    'cac:PaymentMeans',
    el('cbc:PaymentMeansCode', { name: 'SEPA-Überweisung' }, '58'),
    // BT-83: the invoice number as remittance information, as PaymentReference in CII.
    el('cbc:PaymentID', m.number),
    el(
      'cac:PayeeFinancialAccount',
      el('cbc:ID', m.iban),
      el('cbc:Name', m.seller.name),
      m.bic ? el('cac:FinancialInstitutionBranch', el('cbc:ID', m.bic)) : null,
    ),
  );
}

/**
 * BT-22. Peppol allows one document note unless seller and buyer are both German
 * (PEPPOL-EN16931-R002): the notes are then joined into one, in their order.
 */
function notes(m: EInvoiceModel): XmlElement[] {
  if (m.notes.length === 0) return [];
  const bothGerman = m.seller.address.country === 'DE' && m.buyer.address.country === 'DE';
  const texts = bothGerman ? m.notes : [m.notes.join('\n')];
  return texts.map((t) => el('cbc:Note', t));
}

// MonetaryTotalType: LineExtensionAmount, TaxExclusiveAmount, TaxInclusiveAmount, PrepaidAmount, PayableAmount
function legalMonetaryTotal(m: EInvoiceModel): XmlElement {
  const t = m.totals;
  return el(
    'cac:LegalMonetaryTotal',
    // No document-level allowances/charges exist, so BT-106 (Σ line nets) equals BT-109; both are
    // the stored net total, checked against the lines (BR-CO-10).
    amount('cbc:LineExtensionAmount', t.net, m.currency),
    amount('cbc:TaxExclusiveAmount', t.net, m.currency),
    amount('cbc:TaxInclusiveAmount', t.gross, m.currency),
    !t.paid.isZero() && amount('cbc:PrepaidAmount', t.paid, m.currency),
    amount('cbc:PayableAmount', t.due, m.currency),
  );
}

/** Builds the UBL tree without running the rule check (use buildUblInvoice). */
export function buildUblDocument(m: EInvoiceModel, options: UblOptions): XmlElement {
  const { profile } = options;
  const invoice = m.kind === 'invoice';
  const notSubject = m.taxGroups.some((g) => g.category === 'O');
  const withDueDate = invoice && m.dueDate !== null && m.totals.due.greaterThan(0);
  const german = germanRules(m, profile);
  return el(
    invoice ? 'Invoice' : 'CreditNote',
    { xmlns: invoice ? UBL_NAMESPACES.invoice : UBL_NAMESPACES.creditNote, 'xmlns:cac': UBL_NAMESPACES.cac, 'xmlns:cbc': UBL_NAMESPACES.cbc },
    // InvoiceType / CreditNoteType, in XSD order (the two differ in where DueDate and the type code go).
    el('cbc:CustomizationID', UBL_PROFILES[profile].customizationId),
    el('cbc:ProfileID', UBL_PROFILES[profile].profileId),
    el('cbc:ID', m.number),
    el('cbc:IssueDate', m.issueDate),
    // BT-9: Invoice has it in the header; a credit note has no due date (nothing is payable to us).
    withDueDate && el('cbc:DueDate', m.dueDate!),
    el(invoice ? 'cbc:InvoiceTypeCode' : 'cbc:CreditNoteTypeCode', TYPE_CODE[m.kind]),
    notes(m),
    el('cbc:DocumentCurrencyCode', m.currency),
    // BT-6: the VAT accounting currency, with its total (BT-111) in a second TaxTotal below.
    m.taxCurrency && el('cbc:TaxCurrencyCode', m.taxCurrency.code),
    optionalEl('cbc:BuyerReference', m.buyerReference),
    // PeriodType: StartDate, EndDate (BG-14)
    m.servicePeriod && el('cac:InvoicePeriod', el('cbc:StartDate', m.servicePeriod.start), el('cbc:EndDate', m.servicePeriod.end)),
    m.orderReference && el('cac:OrderReference', el('cbc:ID', m.orderReference)),
    // BillingReferenceType: InvoiceDocumentReference (BG-3, BT-25)
    m.relatedInvoiceNumber && el('cac:BillingReference', el('cac:InvoiceDocumentReference', el('cbc:ID', m.relatedInvoiceNumber))),
    el('cac:AccountingSupplierParty', party(m.seller, 'seller', profile, notSubject, german)),
    el('cac:AccountingCustomerParty', party(m.buyer, 'buyer', profile, notSubject, german)),
    // DeliveryType: ActualDeliveryDate, DeliveryLocation (Address/Country, BT-80), DeliveryParty (BT-70).
    // With a service period the period (BG-14) says when, and no single delivery day is claimed.
    (!m.servicePeriod || m.deliverToCountry) &&
      el(
        'cac:Delivery',
        !m.servicePeriod && el('cbc:ActualDeliveryDate', m.deliveryDate),
        // Deliver-to address of an intra-Community supply: the buyer's (BR-IC-12 needs the
        // country, XRechnung with an address also city and post code, BR-DE-10/11).
        m.deliverToCountry && el('cac:DeliveryLocation', postalAddress(m.buyer, 'cac:Address')),
        m.deliverToCountry && el('cac:DeliveryParty', el('cac:PartyName', el('cbc:Name', m.buyer.name))),
      ),
    paymentMeans(m, german),
    // PaymentTermsType: Note (BT-20)
    el('cac:PaymentTerms', el('cbc:Note', paymentTermsText(m))),
    // TaxTotalType: TaxAmount, TaxSubtotal+ (BG-23); then BT-111 alone (PEPPOL-EN16931-R053/R054).
    el(
      'cac:TaxTotal',
      amount('cbc:TaxAmount', m.totals.tax, m.currency),
      m.taxGroups.map((g) => taxSubtotal(g, m.currency, german)),
    ),
    m.taxCurrency && el('cac:TaxTotal', amount('cbc:TaxAmount', m.taxCurrency.taxTotal, m.taxCurrency.code)),
    legalMonetaryTotal(m),
    m.lines.map((l) => line(m, l)),
  );
}

/**
 * Renders the model as a UBL 2.1 Invoice or CreditNote in the given profile. Throws
 * EInvoiceExportError, with the rule ids in `violations`, for a document that would break an
 * EN 16931, Peppol BIS 3.0 or XRechnung rule (the API answers 400 INVALID_INPUT).
 */
export function buildUblInvoice(m: EInvoiceModel, options: UblOptions): string {
  const xml = renderXml(buildUblDocument(m, options));
  const violations = checkUblInvoice(m, xml, options.profile).map(withFix);
  if (violations.length > 0) {
    const name = UBL_PROFILES[options.profile].name;
    throw new EInvoiceExportError(`Invoice ${m.number} would not be a valid ${name} e-invoice: ${violations.map((v) => v.message).join(' ')}`, violations);
  }
  return xml;
}

const SETTINGS = 'PUT /api/settings';
/**
 * What to fill in for the rules our data can break, added to the official wording when we refuse to
 * write a document (as the XRechnung CII rules say it). Here and not in ublRules.ts: those rules also
 * judge documents we receive, whose sender has no settings of ours to fill in.
 */
const FIX: Record<string, string> = {
  'BR-DE-2': `Set contactName, contactPhone and contactEmail (${SETTINGS}).`,
  'BR-DE-3': `Give the seller's address a "PLZ Ort" line (${SETTINGS}).`,
  'BR-DE-4': `Give the seller's address a "PLZ Ort" line (${SETTINGS}).`,
  'BR-DE-5': `Set contactName (${SETTINGS}), a person or department.`,
  'BR-DE-6': `Set contactPhone (${SETTINGS}).`,
  'BR-DE-7': `Set contactEmail (${SETTINGS}).`,
  'BR-DE-8': `Give the customer's address a "PLZ Ort" line.`,
  'BR-DE-9': `Give the customer's address a "PLZ Ort" line.`,
  'BR-DE-15': 'Set buyerReference on the invoice or on its customer (for German public buyers the Leitweg-ID, e.g. 04011000-12345-03).',
  'BR-DE-16': `Set vatId or taxNumber (${SETTINGS}).`,
  'PEPPOL-EN16931-R003': 'Set buyerReference or orderReference on the invoice, or buyerReference on its customer.',
  'PEPPOL-EN16931-R010': "Set the customer's peppolId {scheme, id}, or its VAT ID (AT, DE: used as 9914, 9930).",
  'PEPPOL-EN16931-R020': `Set peppolId {scheme, id} (${SETTINGS}), or the seller's VAT ID (AT, DE: used as 9914, 9930).`,
};
// Peppol's German rules are the same checks under other ids (DE-R-002 = BR-DE-2, …).
for (const n of [2, 3, 4, 5, 6, 7, 8, 9, 15, 16]) FIX[`DE-R-${String(n).padStart(3, '0')}`] = FIX[`BR-DE-${n}`];

function withFix(v: { rule: string; message: string }): { rule: string; message: string } {
  const fix = FIX[v.rule];
  return fix ? { rule: v.rule, message: `${v.message} ${fix}` } : v;
}

/** `buildUblInvoice` for a stored invoice: the model is built as for the CII and ebInterface writers. */
export function buildUblXml(input: DocumentInput, options: UblOptions): string {
  return buildUblInvoice(toEInvoiceModel(input), options);
}
