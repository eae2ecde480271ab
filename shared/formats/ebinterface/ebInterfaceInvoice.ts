/**
 * ebInterface 6.1 writer (the Austrian e-invoice standard, accepted by e-rechnung.gv.at).
 * Element order follows the ebInterface 6.1 Invoice.xsd (AUSTRIAPRO; an official file,
 * docs/official-files.md) exactly; each sequence
 * names the XSD type it implements; the normalisation both formats share is in
 * ../cii/einvoiceModel.ts. A credit note is a CreditMemo with positive amounts and NoPayment; a
 * missing UID is "00000000" only where § 11 UStG allows it (checkVatIds). docs/e-invoicing.md.
 */
import Decimal from 'decimal.js';
import { toEur } from '../../domain/exchangeRates';
import type { DocumentInput } from '../../domain/invoiceView';
import { el, optionalEl, renderXml, type XmlElement } from '../xml';
import { countryNameDe, vatIdCountry } from '../cii/countries';
import { toEInvoiceModel } from '../cii/einvoiceModel';
import type { EInvoiceModel, EInvoiceParty } from '../cii/einvoiceModelTypes';
import { EInvoiceExportError } from '../cii/exportError';
import { formatAmount, formatDecimal, formatPrice } from '../cii/numberFormat';
import { REVERSE_CHARGE_REASON, reverseChargeNote } from '../cii/vatCategories';
import { isBusinessCustomer, realVatId, requiredVatIdentities } from '../../domain/vatIdentities';

export const EBINTERFACE_61_NAMESPACE = 'http://www.ebinterface.at/schema/6p1/';
export const GENERATING_SYSTEM = 'accounting-service';

/** ebInterface's value for "party has no VAT identification number". */
export const NO_VAT_ID = '00000000';

// The rules for which UIDs an invoice must show are shared with finalization (sendInvoice), so
// the PDF and the e-invoice ask for the same identities: shared/domain/vatIdentities.ts.

const BIC_RE = /^[0-9A-Za-z]{8}([0-9A-Za-z]{3})?$/;

function formatDateDe(isoDate: string): string {
  const [y, m, d] = isoDate.split('-');
  return `${d}.${m}.${y}`;
}

// AddressType: AddressIdentifier*, Name, TradingName, Street, POBox, Town, ZIP, Country, Phone*,
// Email*, AdditionalInformation*
function address(p: EInvoiceParty, role: string): XmlElement {
  const { postcode, city, country, lines } = p.address;
  // checkModel reports this as EBI-ADDRESS first; the guard keeps buildEbInterfaceDocument safe
  // when it is called with a model that was not checked.
  const missing = missingAddressParts(p);
  if (missing.length > 0 || !postcode || !city) throw new EInvoiceExportError(addressMessage(role, missing));
  const [street, ...extra] = lines;
  return el(
    'Address',
    el('Name', p.name),
    optionalEl('Street', street),
    el('Town', city),
    el('ZIP', postcode),
    el('Country', { CountryCode: country }, countryNameDe(country)),
    p.phone ? el('Phone', p.phone) : null,
    p.email ? el('Email', p.email) : null,
    extra.map((line) => el('AdditionalInformation', line)),
  );
}

// ContactType: Salutation, Name, Phone*, Email*, AdditionalInformation*
function contact(p: EInvoiceParty): XmlElement | null {
  if (!p.contactName) return null;
  return el('Contact', el('Name', p.contactName), p.email ? el('Email', p.email) : null);
}

/**
 * The wording on a tax item: ebInterface has no exemption code of its own, the category
 * (TaxCategoryCode, UNTDID 5305 as in EN 16931) says what kind, the comment says why (the
 * statutory wording and the line's exemption note). An inferred reverse charge keeps the note
 * it always had.
 */
function taxComment(category: string, reason: string | null, sellerCountry: string): string | null {
  if (category === 'AE' && (reason === null || reason === REVERSE_CHARGE_REASON)) return reverseChargeNote(sellerCountry);
  return reason;
}

/** "1 EUR = 1.0867 USD (EZB-Referenzkurs vom 26.11.2026); USt. in EUR: 57.03" */
function exchangeRateText(m: EInvoiceModel): string {
  const t = m.taxCurrency!;
  const source = t.source === 'ecb' ? 'EZB-Referenzkurs' : 'Kurs';
  return `1 EUR = ${t.rate} ${m.currency} (${source} vom ${formatDateDe(t.date)}); USt. in EUR: ${formatAmount(t.taxTotal)}`;
}

// ---- consistency checks (ebInterface has no EN 16931 Schematron; these are its sums) -------------

interface Violation {
  rule: string;
  message: string;
}

type Fail = (rule: string, message: string) => void;

/** Facts the rules need that the shared model does not carry. */
export interface EbInterfaceCheckContext {
  /**
   * The customer is a business (it has a company name). We store no business/consumer flag, so a
   * company name is the signal; a consumer never has a UID and must not be refused for lacking one.
   */
  buyerIsBusiness: boolean;
}

/**
 * Street, postcode and town. ebInterface's AddressType requires Town and ZIP; the street is
 * optional in the XSD, but § 11 Abs. 1 Z 3 lit. a/b UStG asks for the "Anschrift" of both parties,
 * and a town without street is not one.
 */
function missingAddressParts(p: EInvoiceParty): string[] {
  const missing: string[] = [];
  if (!p.address.lines[0]) missing.push('street');
  if (!p.address.postcode) missing.push('postcode');
  if (!p.address.city) missing.push('town');
  return missing;
}

function addressMessage(role: string, missing: string[]): string {
  return (
    `The ${role} address needs a street, postcode and town for ebInterface (missing: ${missing.join(', ')}); ` +
    'write the street on one line and "PLZ Ort" on its own line or after a comma.'
  );
}

function checkAddresses(m: EInvoiceModel, fail: Fail): void {
  for (const [p, role] of [
    [m.seller, 'seller'],
    [m.buyer, 'customer'],
  ] as const) {
    const missing = missingAddressParts(p);
    if (missing.length > 0) fail('EBI-ADDRESS', addressMessage(role, missing));
  }
}

/**
 * Which UIDs the invoice must show: requiredVatIdentities() (shared/domain/vatIdentities.ts), the
 * rule finalization applies too. EBI-UID-BILLER: seller's UID above the small-amount limit;
 * EBI-UID-RECIPIENT: recipient's UID over EUR 10,000 (AT to AT business); EBI-AE: both for reverse
 * charge. Anyone else may carry "00000000" (docs/e-invoicing.md, "ebInterface: VAT ids").
 */
function checkVatIds(m: EInvoiceModel, ctx: EbInterfaceCheckContext, fail: Fail): void {
  const sellerVat = realVatId(m.seller.vatId);
  const buyerVat = realVatId(m.buyer.vatId);
  // A foreign-currency document with its stored rate compares in EUR, as the limits are in EUR.
  const gross = m.taxCurrency ? new Decimal(toEur(m.totals.gross.abs(), m.taxCurrency.rate)) : m.totals.gross.abs();
  const required = requiredVatIdentities({
    currency: m.taxCurrency ? 'EUR' : m.currency,
    gross,
    chargesVat: m.lines.some((l) => l.taxRate.greaterThan(0)),
    reverseCharge: m.lines.some((l) => l.category === 'AE'),
    sellerCountry: m.seller.address.country,
    buyerCountry: m.buyer.address.country,
    buyerIsBusiness: ctx.buyerIsBusiness,
  });

  // VATIdentificationNumber carries a UID only: a German Steuernummer cannot stand in for it here.
  if (!sellerVat && required.seller) {
    fail('EBI-UID-BILLER', "The invoice charges VAT, so it must show the seller's VAT id (UID, § 11 Abs. 1 Z 3 lit. i UStG); add the VAT id in the settings.");
  }

  if (!buyerVat && required.recipientUid) {
    const amount =
      m.currency === 'EUR' || m.taxCurrency
        ? `The gross total ${formatAmount(gross)} EUR exceeds EUR 10,000`
        : `The gross total is in ${m.currency} and cannot be compared with the EUR 10,000 limit without an exchange rate`;
    fail(
      'EBI-UID-RECIPIENT',
      `${amount} and the customer is an Austrian business: the invoice must show the customer's VAT id (UID, § 11 Abs. 1 Z 3 lit. j UStG).`,
    );
  }

  if (required.reverseCharge) {
    if (!sellerVat) fail('EBI-AE', "Reverse charge requires the seller's VAT id (§ 11 Abs. 1a UStG, Art. 226 Directive 2006/112/EC).");
    if (!buyerVat) fail('EBI-AE', "Reverse charge requires the recipient's VAT id.");
  }
  // An intra-Community supply shows both UIDs (Art. 11 Abs. 1 UStG 1994, § 14a Abs. 3 UStG).
  if (m.lines.some((l) => l.category === 'K')) {
    if (!sellerVat) fail('EBI-IC', "An intra-Community supply requires the seller's VAT id (Art. 11 Abs. 1 UStG 1994).");
    if (!buyerVat) fail('EBI-IC', "An intra-Community supply requires the recipient's VAT id.");
  }
}

function checkModel(m: EInvoiceModel, ctx: EbInterfaceCheckContext): Violation[] {
  const out: Violation[] = [];
  const fail: Fail = (rule, message) => out.push({ rule, message: `[${rule}] ${message}` });
  const sum = (ds: Decimal[]) => ds.reduce((a, b) => a.plus(b), new Decimal(0));

  for (const l of m.lines) {
    const expected = l.quantity.times(l.unitPrice).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
    if (!expected.equals(l.netAmount))
      fail('EBI-LINE-NET', `Line ${l.position}: ${formatAmount(l.netAmount)} ≠ quantity x unit price = ${expected.toFixed(2)}.`);
    if (l.quantity.decimalPlaces() > 4) fail('EBI-DEC', `Line ${l.position}: quantity has more than 4 decimals.`);
    if (l.unitPrice.decimalPlaces() > 4) fail('EBI-DEC', `Line ${l.position}: unit price has more than 4 decimals.`);
  }
  const amounts: Array<[string, Decimal]> = [
    ['net total', m.totals.net],
    ['tax total', m.totals.tax],
    ['gross total', m.totals.gross],
    ['paid amount', m.totals.paid],
    ['payable amount', m.totals.due],
    ...m.lines.map((l) => [`line ${l.position} amount`, l.netAmount] as [string, Decimal]),
    ...m.taxGroups.flatMap(
      (g) =>
        [
          [`taxable amount ${g.rate}%`, g.basis],
          [`tax amount ${g.rate}%`, g.tax],
        ] as Array<[string, Decimal]>,
    ),
  ];
  for (const [name, d] of amounts) if (d.decimalPlaces() > 2) fail('EBI-DEC', `The ${name} has more than 2 decimals.`);
  for (const g of m.taxGroups) if (g.rate.decimalPlaces() > 2) fail('EBI-DEC', `VAT rate ${g.rate} has more than 2 decimals.`);

  if (m.taxGroups.length === 0) fail('EBI-TAX', 'The invoice has no VAT breakdown.');
  const keys = new Set<string>();
  for (const g of m.taxGroups) {
    const key = `${g.category}/${g.rate.toString()}`;
    if (keys.has(key)) fail('EBI-TAX', `VAT group ${key} appears twice.`);
    keys.add(key);
    const lineSum = sum(m.lines.filter((l) => l.category === g.category && l.taxRate.equals(g.rate)).map((l) => l.netAmount));
    if (!lineSum.equals(g.basis)) fail('EBI-TAX', `Taxable amount ${formatAmount(g.basis)} at ${g.rate} % ≠ sum of its lines ${formatAmount(lineSum)}.`);
    const expectedTax = g.basis.times(g.rate).dividedBy(100).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
    if (g.tax.minus(expectedTax).abs().greaterThanOrEqualTo(1))
      fail('EBI-TAX', `Tax amount ${formatAmount(g.tax)} at ${g.rate} % ≠ ${expectedTax.toFixed(2)}.`);
    if (g.category !== 'S' && !g.tax.isZero()) fail('EBI-TAX', `Tax amount of category ${g.category} must be 0.`);
  }
  for (const l of m.lines) {
    if (!keys.has(`${l.category}/${l.taxRate.toString()}`)) fail('EBI-TAX', `Line ${l.position} (${l.category} ${l.taxRate} %) has no VAT group.`);
  }
  const net = sum(m.lines.map((l) => l.netAmount));
  if (!net.equals(m.totals.net)) fail('EBI-TOTAL', `Net total ${formatAmount(m.totals.net)} ≠ sum of lines ${formatAmount(net)}.`);
  const basisSum = sum(m.taxGroups.map((g) => g.basis));
  if (!basisSum.equals(m.totals.net)) fail('EBI-TOTAL', `Sum of taxable amounts ${formatAmount(basisSum)} ≠ net total ${formatAmount(m.totals.net)}.`);
  const taxSum = sum(m.taxGroups.map((g) => g.tax));
  if (!taxSum.equals(m.totals.tax)) fail('EBI-TOTAL', `Tax total ${formatAmount(m.totals.tax)} ≠ sum of tax amounts ${formatAmount(taxSum)}.`);
  if (!m.totals.net.plus(m.totals.tax).equals(m.totals.gross)) fail('EBI-TOTAL', `Gross total ${formatAmount(m.totals.gross)} ≠ net + tax.`);
  if (!m.totals.gross.minus(m.totals.paid).equals(m.totals.due))
    fail('EBI-TOTAL', `Payable amount ${formatAmount(m.totals.due)} ≠ gross total - prepaid amount.`);
  checkVatIds(m, ctx, fail);
  checkAddresses(m, fail);
  return out;
}

// ---- document ---------------------------------------------------------------------------------------

function paymentMethod(m: EInvoiceModel): XmlElement | null {
  // PaymentMethodType: Comment, (NoPayment | SEPADirectDebit | UniversalBankTransaction | PaymentCard | OtherPayment), Extension
  if (m.kind === 'creditNote') {
    return el('PaymentMethod', el('Comment', 'Gutschrift: der Betrag wird erstattet oder verrechnet.'), el('NoPayment'));
  }
  if (!m.iban) return null;
  return el(
    'PaymentMethod',
    el('Comment', 'SEPA-Überweisung'),
    // UniversalBankTransactionType: BeneficiaryAccount*, PaymentReference
    el(
      'UniversalBankTransaction',
      // AccountType: BankName, BankCode, BIC, BankAccountNr, IBAN, BankAccountOwner
      el('BeneficiaryAccount', m.bic && BIC_RE.test(m.bic) ? el('BIC', m.bic) : null, el('IBAN', m.iban), el('BankAccountOwner', m.seller.name.slice(0, 70))),
      m.number.length <= 35 ? el('PaymentReference', m.number) : null,
    ),
  );
}

function paymentConditions(m: EInvoiceModel): XmlElement | null {
  if (m.kind === 'creditNote') return null;
  // PaymentConditionsType: DueDate, Discount*, MinimumPayment, Comment, Extension
  if (!m.totals.due.greaterThan(0)) return el('PaymentConditions', el('Comment', 'Bereits vollständig bezahlt.'));
  const terms = m.dueDate
    ? `Zahlbar ohne Abzug bis ${formatDateDe(m.dueDate)}.`
    : m.paymentTermDays !== null
      ? `Zahlbar ohne Abzug innerhalb von ${m.paymentTermDays} Tagen.`
      : 'Zahlbar sofort ohne Abzug.';
  return el('PaymentConditions', m.dueDate ? el('DueDate', m.dueDate) : null, el('Comment', terms));
}

export function buildEbInterfaceDocument(m: EInvoiceModel, sellerCountry: string): XmlElement {
  const isCredit = m.kind === 'creditNote';
  return el(
    'Invoice',
    {
      xmlns: EBINTERFACE_61_NAMESPACE,
      GeneratingSystem: GENERATING_SYSTEM,
      DocumentType: isCredit ? 'CreditMemo' : 'Invoice',
      InvoiceCurrency: m.currency,
      DocumentTitle: `${isCredit ? 'Gutschrift' : 'Rechnung'} ${m.number}`,
      Language: 'de',
    },
    // InvoiceType: InvoiceNumber, InvoiceDate, CancelledOriginalDocument, RelatedDocument*,
    // AdditionalInformation*, CurrencyExchangeInformation, Delivery, Biller, InvoiceRecipient,
    // OrderingParty, Details, ReductionAndSurchargeDetails, Tax, TotalGrossAmount, PrepaidAmount,
    // RoundingAmount, PayableAmount, PaymentMethod, PaymentConditions, Comment, Extension
    el('InvoiceNumber', m.number),
    el('InvoiceDate', m.issueDate),
    m.relatedInvoiceNumber
      ? // RelatedDocumentType: InvoiceNumber, InvoiceDate, DocumentType, Comment
        el(
          'RelatedDocument',
          el('InvoiceNumber', m.relatedInvoiceNumber),
          el('DocumentType', 'Invoice'),
          el('Comment', `Gutschrift zu Rechnung ${m.relatedInvoiceNumber}`),
        )
      : null,
    // CurrencyExchangeInformationType: Currency, ExchangeRate, ExchangeRateDate, Comment. As in the
    // standard's own sample: the foreign currency and its units per EUR (the ECB's quote).
    m.taxCurrency
      ? el(
          'CurrencyExchangeInformation',
          el('Currency', m.currency),
          el('ExchangeRate', m.taxCurrency.rate),
          el('ExchangeRateDate', m.taxCurrency.date),
          el('Comment', exchangeRateText(m)),
        )
      : null,
    // DeliveryType: DeliveryID, (Date | Period), Address, Contact, Description. § 11 UStG needs
    // the day of delivery or the period of the service; without either the model takes the issue date.
    el('Delivery', m.servicePeriod ? el('Period', el('FromDate', m.servicePeriod.start), el('ToDate', m.servicePeriod.end)) : el('Date', m.deliveryDate)),
    // BillerType (AbstractPartyType): VATIdentificationNumber, FurtherIdentification*, OrderReference,
    // Address, Contact, InvoiceRecipientsBillerID, Extension
    el('Biller', el('VATIdentificationNumber', realVatId(m.seller.vatId) ?? NO_VAT_ID), address(m.seller, 'seller'), contact(m.seller)),
    // InvoiceRecipientType: VATIdentificationNumber, FurtherIdentification*, OrderReference, Address,
    // Contact, BillersInvoiceRecipientID, AccountingArea, SubOrganizationID, Extension.
    // BT-13 (purchase order) is the recipient's OrderReference/OrderID, the Auftragsreferenz
    // e-rechnung.gv.at asks for (OrderReferenceType: OrderID, ReferenceDate, Description).
    // BT-10 (the buyer's routing reference) has no element of its own in ebInterface 6.1; it goes
    // into SubOrganizationID, the recipient's internal unit the invoice is for (docs/e-invoicing.md,
    // "ebInterface: buyer and order reference"). BillersInvoiceRecipientID is the seller's number
    // for the customer and AccountingArea a ≤ 20 character Buchungskreis: neither is BT-10.
    el(
      'InvoiceRecipient',
      el('VATIdentificationNumber', realVatId(m.buyer.vatId) ?? NO_VAT_ID),
      m.orderReference ? el('OrderReference', el('OrderID', m.orderReference)) : null,
      address(m.buyer, 'customer'),
      contact(m.buyer),
      optionalEl('SubOrganizationID', m.buyerReference),
    ),
    // DetailsType: HeaderDescription, ItemList+, FooterDescription, BelowTheLineItem*
    el(
      'Details',
      // ItemListType: HeaderDescription, ListLineItem+, FooterDescription
      el(
        'ItemList',
        m.lines.map((l) =>
          // ListLineItemType: PositionNumber, Description+, ArticleNumber*, Quantity, UnitPrice,
          // ReductionAndSurchargeListLineItemDetails, Delivery, BillersOrderReference,
          // InvoiceRecipientsOrderReference, Classification*, AdditionalInformation*, TaxItem,
          // LineItemAmount, Extension
          el(
            'ListLineItem',
            el('PositionNumber', String(l.position)),
            el('Description', l.fullDescription),
            el('Quantity', { Unit: l.unitCode }, formatDecimal(l.quantity)),
            el('UnitPrice', formatPrice(l.unitPrice)),
            // TaxItemType: TaxableAmount, TaxPercent, TaxAmount, AccountingCurrencyAmount, Comment, Extension
            el(
              'TaxItem',
              el('TaxableAmount', formatAmount(l.netAmount)),
              el('TaxPercent', { TaxCategoryCode: l.category }, formatDecimal(l.taxRate)),
              optionalEl('Comment', taxComment(l.category, l.taxCategory ? l.vatReason : null, sellerCountry)),
            ),
            el('LineItemAmount', formatAmount(l.netAmount)),
          ),
        ),
      ),
    ),
    // TaxType: TaxItem*, OtherTax*, Extension
    el(
      'Tax',
      m.taxGroups.map((g) =>
        el(
          'TaxItem',
          el('TaxableAmount', formatAmount(g.basis)),
          el('TaxPercent', { TaxCategoryCode: g.category }, formatDecimal(g.rate)),
          el('TaxAmount', formatAmount(g.tax)),
          // The group's VAT in EUR (AT § 20 Abs. 6 UStG 1994), converted with the stored rate.
          m.taxCurrency ? el('AccountingCurrencyAmount', { Currency: m.taxCurrency.code }, toEur(g.tax, m.taxCurrency.rate)) : null,
          optionalEl('Comment', taxComment(g.category, g.exemptionReason, sellerCountry)),
        ),
      ),
    ),
    el('TotalGrossAmount', formatAmount(m.totals.gross)),
    m.totals.paid.isZero() ? null : el('PrepaidAmount', formatAmount(m.totals.paid)),
    el('PayableAmount', formatAmount(m.totals.due)),
    paymentMethod(m),
    paymentConditions(m),
    m.notes.length > 0 ? el('Comment', m.notes.join('\n\n')) : null,
  );
}

/**
 * Renders a finalized sales invoice (rechnung) or credit note (gutschrift) as ebInterface 6.1.
 * Throws EInvoiceExportError for documents that cannot be exported, for documents whose
 * amounts do not reconcile and for missing VAT ids or incomplete addresses (rule ids EBI-*).
 */
export function buildEbInterfaceXml(input: DocumentInput): string {
  const model = toEInvoiceModel(input);
  const violations = checkModel(model, { buyerIsBusiness: isBusinessCustomer(input.invoice.customer) });
  if (violations.length > 0) {
    throw new EInvoiceExportError(`Invoice ${model.number} cannot be exported as ebInterface: ${violations.map((v) => v.message).join(' ')}`, violations);
  }
  const sellerCountry = vatIdCountry(input.seller.vatId) ?? input.seller.country.toUpperCase();
  return renderXml(buildEbInterfaceDocument(model, sellerCountry));
}
