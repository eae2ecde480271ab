/**
 * UN/CEFACT CII D16B writer, Factur-X / ZUGFeRD profile EN 16931, embedded as factur-x.xml.
 * Element order follows Factur-X_EN16931.xsd; each sequence names the XSD type it implements.
 * Every document passes the EN 16931 checks (`checkEn16931Document`, on the tree about to be
 * written) before it is returned, so a bug throws instead of producing an invalid e-invoice.
 */
import type { DocumentInput } from '../../domain/invoiceView';
import { el, optionalEl, renderXml, type XmlElement } from '../xml';
import { checkEn16931Document } from './en16931Rules';
import { paymentTermsText, toEInvoiceModel } from './einvoiceModel';
import type { EInvoiceLine, EInvoiceModel, EInvoiceParty, EInvoiceTaxGroup } from './einvoiceModelTypes';
import { EInvoiceExportError } from './exportError';
import { formatAmount, formatDecimal, formatPrice } from './numberFormat';

export const CII_NAMESPACES = {
  rsm: 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100',
  qdt: 'urn:un:unece:uncefact:data:standard:QualifiedDataType:100',
  ram: 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100',
  udt: 'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100',
} as const;

/** BT-24 for the Factur-X / ZUGFeRD EN 16931 profile. */
export const EN16931_GUIDELINE_ID = 'urn:cen.eu:en16931:2017';
/** BT-24 of an XRechnung 3.0 document (BR-DE-21). */
export const XRECHNUNG_GUIDELINE_ID = 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0';
/** BT-23 (business process), which XRechnung 3.0 requires through PEPPOL-EN16931-R001. */
export const PEPPOL_BILLING_PROCESS = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';

/**
 * What the two CII documents differ in. `en16931`: the ZUGFeRD / Factur-X XML, unchanged since it
 * was first written. `xrechnung`: the XRechnung CIUS on top (BT-23/BT-24, the Peppol electronic
 * address before the e-mail, payment instructions on credit notes, the full deliver-to address).
 */
export type CiiProfile = 'en16931' | 'xrechnung';

/** UNTDID 1001: 380 commercial invoice, 381 credit note. */
const TYPE_CODE = { invoice: '380', creditNote: '381' } as const;

const date102 = (isoDate: string) => el('udt:DateTimeString', { format: '102' }, isoDate.replace(/-/g, ''));

// TradeAddressType: PostcodeCode, LineOne, LineTwo, LineThree, CityName, CountryID
function postalAddress(p: Pick<EInvoiceParty, 'address'>): XmlElement {
  const [one, two, ...rest] = p.address.lines;
  return el(
    'ram:PostalTradeAddress',
    optionalEl('ram:PostcodeCode', p.address.postcode),
    optionalEl('ram:LineOne', one),
    optionalEl('ram:LineTwo', two),
    optionalEl('ram:LineThree', rest.join(', ')),
    optionalEl('ram:CityName', p.address.city),
    el('ram:CountryID', p.address.country),
  );
}

// TradePartyType: ID, GlobalID, Name, Description, SpecifiedLegalOrganization, DefinedTradeContact,
// PostalTradeAddress, URIUniversalCommunication, SpecifiedTaxRegistration (max 2)
function tradeParty(tag: string, p: EInvoiceParty, role: 'seller' | 'buyer', notSubject: boolean, profile: CiiProfile): XmlElement {
  const withContact = Boolean(p.contactName || (role === 'seller' && (p.phone || p.email)));
  // Not subject to VAT: no VAT identifiers at all (BR-O-02); the seller is then identified by
  // its VAT number or tax number as Seller identifier (BT-29), which BR-CO-26 asks for.
  const sellerId = notSubject && role === 'seller' ? (p.vatId ?? p.taxNumber) : null;
  return el(
    tag,
    optionalEl('ram:ID', sellerId),
    el('ram:Name', p.name),
    withContact &&
      // TradeContactType: PersonName, DepartmentName, TelephoneUniversalCommunication, EmailURIUniversalCommunication
      el(
        'ram:DefinedTradeContact',
        optionalEl('ram:PersonName', p.contactName),
        p.phone ? el('ram:TelephoneUniversalCommunication', el('ram:CompleteNumber', p.phone)) : null,
        p.email ? el('ram:EmailURIUniversalCommunication', el('ram:URIID', p.email)) : null,
      ),
    postalAddress(p),
    // BT-34 / BT-49 electronic address; EAS scheme "EM" = e-mail (BR-62/BR-63 need a scheme).
    // ZUGFeRD keeps the e-mail first; XRechnung (Peppol routing) the participant id first.
    electronicAddress(p, profile),
    role === 'seller' && p.taxNumber ? el('ram:SpecifiedTaxRegistration', el('ram:ID', { schemeID: 'FC' }, p.taxNumber)) : null,
    p.vatId && !notSubject ? el('ram:SpecifiedTaxRegistration', el('ram:ID', { schemeID: 'VA' }, p.vatId)) : null,
  );
}

function electronicAddress(p: EInvoiceParty, profile: CiiProfile): XmlElement | null {
  const email = p.email ? { scheme: 'EM', id: p.email } : null;
  const address = profile === 'xrechnung' ? (p.electronicAddress ?? email) : (email ?? p.electronicAddress);
  return address ? el('ram:URIUniversalCommunication', el('ram:URIID', { schemeID: address.scheme }, address.id)) : null;
}

// SupplyChainTradeLineItemType: AssociatedDocumentLineDocument, SpecifiedTradeProduct,
// SpecifiedLineTradeAgreement, SpecifiedLineTradeDelivery, SpecifiedLineTradeSettlement
function lineItem(line: EInvoiceLine): XmlElement {
  return el(
    'ram:IncludedSupplyChainTradeLineItem',
    el('ram:AssociatedDocumentLineDocument', el('ram:LineID', String(line.position))),
    // TradeProductType: ..., Name, Description
    el('ram:SpecifiedTradeProduct', el('ram:Name', line.name), optionalEl('ram:Description', line.description)),
    // LineTradeAgreementType: BuyerOrderReferencedDocument, GrossPriceProductTradePrice, NetPriceProductTradePrice
    el('ram:SpecifiedLineTradeAgreement', el('ram:NetPriceProductTradePrice', el('ram:ChargeAmount', formatPrice(line.unitPrice)))),
    el('ram:SpecifiedLineTradeDelivery', el('ram:BilledQuantity', { unitCode: line.unitCode }, formatDecimal(line.quantity))),
    // LineTradeSettlementType: ApplicableTradeTax, BillingSpecifiedPeriod, SpecifiedTradeAllowanceCharge,
    // SpecifiedTradeSettlementLineMonetarySummation
    el(
      'ram:SpecifiedLineTradeSettlement',
      // TradeTaxType order: CalculatedAmount, TypeCode, ExemptionReason, BasisAmount, CategoryCode,
      // ExemptionReasonCode, TaxPointDate, DueDateTypeCode, RateApplicablePercent
      el(
        'ram:ApplicableTradeTax',
        el('ram:TypeCode', 'VAT'),
        el('ram:CategoryCode', line.category),
        // Not subject to VAT has no rate (BR-O-05).
        line.category !== 'O' && el('ram:RateApplicablePercent', formatDecimal(line.taxRate)),
      ),
      el('ram:SpecifiedTradeSettlementLineMonetarySummation', el('ram:LineTotalAmount', formatAmount(line.netAmount))),
    ),
  );
}

function headerTax(g: EInvoiceTaxGroup, profile: CiiProfile): XmlElement {
  return el(
    'ram:ApplicableTradeTax',
    el('ram:CalculatedAmount', formatAmount(g.tax)),
    el('ram:TypeCode', 'VAT'),
    optionalEl('ram:ExemptionReason', g.exemptionReason),
    el('ram:BasisAmount', formatAmount(g.basis)),
    el('ram:CategoryCode', g.category),
    optionalEl('ram:ExemptionReasonCode', g.exemptionReasonCode),
    // Not subject to VAT has no rate in EN 16931; XRechnung requires one in every group (BR-DE-14): 0.
    (g.category !== 'O' || profile === 'xrechnung') && el('ram:RateApplicablePercent', g.category === 'O' ? '0' : formatDecimal(g.rate)),
  );
}

// TradeSettlementPaymentMeansType: TypeCode, Information, ApplicableTradeSettlementFinancialCard,
// PayerPartyDebtorFinancialAccount, PayeePartyCreditorFinancialAccount, PayeeSpecifiedCreditorFinancialInstitution
function paymentMeans(m: EInvoiceModel, profile: CiiProfile): XmlElement | null {
  // A credit note is paid by the seller to the buyer: the seller's account is not a payment
  // instruction for it. XRechnung requires payment instructions all the same (BR-DE-1): "1"
  // (instrument not defined) says how without naming an account.
  if (m.kind === 'creditNote') {
    return profile === 'xrechnung'
      ? el('ram:SpecifiedTradeSettlementPaymentMeans', el('ram:TypeCode', '1'), el('ram:Information', 'Erstattung oder Verrechnung durch den Verkäufer'))
      : null;
  }
  if (!m.iban) return el('ram:SpecifiedTradeSettlementPaymentMeans', el('ram:TypeCode', '1'));
  return el(
    'ram:SpecifiedTradeSettlementPaymentMeans',
    el('ram:TypeCode', '58'),
    el('ram:Information', 'SEPA-Überweisung'),
    // CreditorFinancialAccountType: IBANID, AccountName, ProprietaryID
    el('ram:PayeePartyCreditorFinancialAccount', el('ram:IBANID', m.iban), el('ram:AccountName', m.seller.name)),
    m.bic ? el('ram:PayeeSpecifiedCreditorFinancialInstitution', el('ram:BICID', m.bic)) : null,
  );
}

// TradePaymentTermsType: Description, DueDateDateTime, DirectDebitMandateID
function paymentTerms(m: EInvoiceModel): XmlElement {
  const withDueDate = m.kind === 'invoice' && m.dueDate !== null && m.totals.due.greaterThan(0);
  return el('ram:SpecifiedTradePaymentTerms', el('ram:Description', paymentTermsText(m)), withDueDate && el('ram:DueDateDateTime', date102(m.dueDate!)));
}

// TradeSettlementHeaderMonetarySummationType: LineTotalAmount, ChargeTotalAmount, AllowanceTotalAmount,
// TaxBasisTotalAmount, TaxTotalAmount, RoundingAmount, GrandTotalAmount, TotalPrepaidAmount, DuePayableAmount
function monetarySummation(m: EInvoiceModel): XmlElement {
  const t = m.totals;
  return el(
    'ram:SpecifiedTradeSettlementHeaderMonetarySummation',
    // No document-level allowances/charges exist, so BT-106 (Σ line nets) equals BT-109; both are
    // the stored invoice net total and the checker verifies it against the lines (BR-CO-10).
    el('ram:LineTotalAmount', formatAmount(t.net)),
    el('ram:TaxBasisTotalAmount', formatAmount(t.net)),
    el('ram:TaxTotalAmount', { currencyID: m.currency }, formatAmount(t.tax)),
    // BT-111: the VAT in the accounting currency (BT-6), converted with the invoice's stored rate.
    m.taxCurrency && el('ram:TaxTotalAmount', { currencyID: m.taxCurrency.code }, formatAmount(m.taxCurrency.taxTotal)),
    el('ram:GrandTotalAmount', formatAmount(t.gross)),
    !t.paid.isZero() && el('ram:TotalPrepaidAmount', formatAmount(t.paid)),
    el('ram:DuePayableAmount', formatAmount(t.due)),
  );
}

/** Builds the CII tree without running the rule check (use buildCiiXml). */
export function buildCiiDocument(m: EInvoiceModel, profile: CiiProfile = 'en16931'): XmlElement {
  const notSubject = m.taxGroups.some((g) => g.category === 'O');
  const xrechnung = profile === 'xrechnung';
  return el(
    'rsm:CrossIndustryInvoice',
    {
      'xmlns:rsm': CII_NAMESPACES.rsm,
      'xmlns:qdt': CII_NAMESPACES.qdt,
      'xmlns:ram': CII_NAMESPACES.ram,
      'xmlns:udt': CII_NAMESPACES.udt,
    },
    // ExchangedDocumentContextType: BusinessProcessSpecifiedDocumentContextParameter, GuidelineSpecifiedDocumentContextParameter
    el(
      'rsm:ExchangedDocumentContext',
      xrechnung && el('ram:BusinessProcessSpecifiedDocumentContextParameter', el('ram:ID', PEPPOL_BILLING_PROCESS)),
      el('ram:GuidelineSpecifiedDocumentContextParameter', el('ram:ID', xrechnung ? XRECHNUNG_GUIDELINE_ID : EN16931_GUIDELINE_ID)),
    ),
    // ExchangedDocumentType: ID, TypeCode, IssueDateTime, IncludedNote*
    el(
      'rsm:ExchangedDocument',
      el('ram:ID', m.number),
      el('ram:TypeCode', TYPE_CODE[m.kind]),
      el('ram:IssueDateTime', date102(m.issueDate)),
      m.notes.map((note) => el('ram:IncludedNote', el('ram:Content', note))),
    ),
    // SupplyChainTradeTransactionType: IncludedSupplyChainTradeLineItem+, ApplicableHeaderTradeAgreement,
    // ApplicableHeaderTradeDelivery, ApplicableHeaderTradeSettlement
    el(
      'rsm:SupplyChainTradeTransaction',
      m.lines.map(lineItem),
      // HeaderTradeAgreementType: BuyerReference, SellerTradeParty, BuyerTradeParty, ...,
      // SellerOrderReferencedDocument, BuyerOrderReferencedDocument, ...
      el(
        'ram:ApplicableHeaderTradeAgreement',
        optionalEl('ram:BuyerReference', m.buyerReference),
        tradeParty('ram:SellerTradeParty', m.seller, 'seller', notSubject, profile),
        tradeParty('ram:BuyerTradeParty', m.buyer, 'buyer', notSubject, profile),
        m.orderReference && el('ram:BuyerOrderReferencedDocument', el('ram:IssuerAssignedID', m.orderReference)),
      ),
      // HeaderTradeDeliveryType: ShipToTradeParty, ActualDeliverySupplyChainEvent, ... With a
      // service period the period (BG-14, below) says when, and no single delivery day is claimed.
      el(
        'ram:ApplicableHeaderTradeDelivery',
        // Deliver-to country (BT-80) of an intra-Community supply (BR-IC-12): the buyer's address.
        // XRechnung wants a deliver-to address with city and post code (BR-DE-10/11): the buyer's.
        m.deliverToCountry &&
          el(
            'ram:ShipToTradeParty',
            el('ram:Name', m.buyer.name),
            xrechnung
              ? postalAddress({ address: { ...m.buyer.address, country: m.deliverToCountry } })
              : el('ram:PostalTradeAddress', el('ram:CountryID', m.deliverToCountry)),
          ),
        !m.servicePeriod && el('ram:ActualDeliverySupplyChainEvent', el('ram:OccurrenceDateTime', date102(m.deliveryDate))),
      ),
      // HeaderTradeSettlementType: CreditorReferenceID, PaymentReference, TaxCurrencyCode, InvoiceCurrencyCode,
      // PayeeTradeParty, SpecifiedTradeSettlementPaymentMeans*, ApplicableTradeTax+, BillingSpecifiedPeriod,
      // SpecifiedTradeAllowanceCharge*, SpecifiedTradePaymentTerms, SpecifiedTradeSettlementHeaderMonetarySummation,
      // InvoiceReferencedDocument*, ReceivableSpecifiedTradeAccountingAccount
      el(
        'ram:ApplicableHeaderTradeSettlement',
        m.kind === 'invoice' && el('ram:PaymentReference', m.number),
        m.taxCurrency && el('ram:TaxCurrencyCode', m.taxCurrency.code),
        el('ram:InvoiceCurrencyCode', m.currency),
        paymentMeans(m, profile),
        m.taxGroups.map((g) => headerTax(g, profile)),
        m.servicePeriod &&
          el('ram:BillingSpecifiedPeriod', el('ram:StartDateTime', date102(m.servicePeriod.start)), el('ram:EndDateTime', date102(m.servicePeriod.end))),
        paymentTerms(m),
        monetarySummation(m),
        m.relatedInvoiceNumber ? el('ram:InvoiceReferencedDocument', el('ram:IssuerAssignedID', m.relatedInvoiceNumber)) : null,
      ),
    ),
  );
}

/**
 * Renders a finalized sales invoice (rechnung) or credit note (gutschrift) as Factur-X / ZUGFeRD
 * EN 16931 CII XML. Throws EInvoiceExportError for documents that cannot be exported (quotes,
 * incoming invoices, drafts) and for documents that would violate an EN 16931 rule.
 */
export function buildCiiXml(input: DocumentInput): string {
  const model = toEInvoiceModel(input);
  const document = buildCiiDocument(model);
  const violations = checkEn16931Document(document);
  if (violations.length > 0) {
    throw new EInvoiceExportError(`Invoice ${model.number} would not be a valid EN 16931 e-invoice: ${violations.map((v) => v.message).join(' ')}`, violations);
  }
  return renderXml(document);
}
