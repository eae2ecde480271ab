/**
 * EN 16931 rules on the document header and the parties (seller, buyer, tax representative), and
 * on the payment instructions and preceding invoice references of the header settlement.
 * Order in the tables is the order of the findings.
 */
import { COUNTRY_CODES, CURRENCY_RE, DOCUMENT_TYPE_CODES, PAYMENT_MEANS_CODES, VAT_PREFIXES } from './codeLists';
import type { InvoiceCtx, PaymentMeansCtx, Rule } from './context';
import { validDate102 } from './values';
import { all, attr, blank, kids, one, text, textAt, type XNode } from './xmlNodes';

const typeCode = (inv: InvoiceCtx) => textAt(inv.doc, 'TypeCode')?.trim();
const sellerAddress = (inv: InvoiceCtx) => one(inv.seller, 'PostalTradeAddress');
const buyerAddress = (inv: InvoiceCtx) => one(inv.buyer, 'PostalTradeAddress');

/** BR-62/BR-63: an electronic address needs its scheme. */
function electronicAddressRule(id: 'BR-62' | 'BR-63', who: 'Seller' | 'Buyer', bt: string): Rule<InvoiceCtx> {
  return {
    id,
    check(inv) {
      const uri = one(who === 'Seller' ? inv.seller : inv.buyer, 'URIUniversalCommunication');
      if (uri && blank(attr(one(uri, 'URIID'), 'schemeID'))) return `The ${who} electronic address (${bt}) shall have a Scheme identifier.`;
    },
  };
}

/** Document level rules, run once per invoice. */
export const headerRules: ReadonlyArray<Rule<InvoiceCtx>> = [
  {
    id: 'BR-01',
    check: (inv) =>
      blank(textAt(inv.root, 'ExchangedDocumentContext/GuidelineSpecifiedDocumentContextParameter/ID'))
        ? 'An Invoice shall have a Specification identifier (BT-24).'
        : undefined,
  },
  { id: 'BR-02', check: (inv) => (blank(textAt(inv.doc, 'ID')) ? 'An Invoice shall have an Invoice number (BT-1).' : undefined) },
  { id: 'BR-03', check: (inv) => (blank(text(inv.issueDate)) ? 'An Invoice shall have an Invoice issue date (BT-2) in format 102.' : undefined) },
  { id: 'BR-04', check: (inv) => (blank(typeCode(inv)) ? 'An Invoice shall have an Invoice type code (BT-3).' : undefined) },
  {
    id: 'BR-CL-01',
    check(inv) {
      const code = typeCode(inv);
      if (!blank(code) && !DOCUMENT_TYPE_CODES.has(code!)) return `Invoice type code ${code} is not in UNTDID 1001 (EN 16931 subset).`;
    },
  },
  { id: 'BR-05', check: (inv) => (blank(inv.currency) ? 'An Invoice shall have an Invoice currency code (BT-5).' : undefined) },
  {
    id: 'BR-CL-04',
    check: (inv) => (!blank(inv.currency) && !CURRENCY_RE.test(inv.currency!) ? `Invoice currency code ${inv.currency} is not an ISO 4217 code.` : undefined),
  },
  {
    id: 'X-DATE',
    check(inv) {
      const dates = [
        ...all(inv.tx, 'ApplicableHeaderTradeDelivery/ActualDeliverySupplyChainEvent/OccurrenceDateTime/DateTimeString'),
        ...all(inv.settlement, 'SpecifiedTradePaymentTerms/DueDateDateTime/DateTimeString'),
        ...(inv.issueDate ? [inv.issueDate] : []),
        ...(inv.periodStart ? [inv.periodStart] : []),
        ...(inv.periodEnd ? [inv.periodEnd] : []),
      ];
      return dates.filter((dt) => attr(dt, 'format') === '102' && !validDate102(text(dt))).map((dt) => `Date "${text(dt)}" is not a valid YYYYMMDD date.`);
    },
  },
  {
    id: 'BR-29',
    check(inv) {
      // Format 102 (YYYYMMDD) compares as text.
      if (inv.periodStart && inv.periodEnd && text(inv.periodEnd)! < text(inv.periodStart)!) {
        return 'If both Invoicing period start date (BT-73) and Invoicing period end date (BT-74) are given then the Invoicing period end date (BT-74) shall be later or equal to the Invoicing period start date (BT-73).';
      }
    },
  },
  { id: 'BR-06', check: (inv) => (blank(textAt(inv.seller, 'Name')) ? 'An Invoice shall contain the Seller name (BT-27).' : undefined) },
  { id: 'BR-07', check: (inv) => (blank(textAt(inv.buyer, 'Name')) ? 'An Invoice shall contain the Buyer name (BT-44).' : undefined) },
  { id: 'BR-08', check: (inv) => (!sellerAddress(inv) ? 'An Invoice shall contain the Seller postal address (BG-5).' : undefined) },
  {
    id: 'BR-09',
    check(inv) {
      const addr = sellerAddress(inv);
      if (addr && blank(textAt(addr, 'CountryID'))) return 'The Seller postal address (BG-5) shall contain a Seller country code (BT-40).';
    },
  },
  { id: 'BR-10', check: (inv) => (!buyerAddress(inv) ? 'An Invoice shall contain the Buyer postal address (BG-8).' : undefined) },
  {
    id: 'BR-11',
    check(inv) {
      const addr = buyerAddress(inv);
      if (addr && blank(textAt(addr, 'CountryID'))) return 'The Buyer postal address shall contain a Buyer country code (BT-55).';
    },
  },
  {
    id: 'BR-CL-14',
    check(inv) {
      const countries = all(inv.root, 'SupplyChainTradeTransaction/ApplicableHeaderTradeAgreement/SellerTradeParty/PostalTradeAddress/CountryID').concat(
        all(inv.root, 'SupplyChainTradeTransaction/ApplicableHeaderTradeAgreement/BuyerTradeParty/PostalTradeAddress/CountryID'),
      );
      return countries
        .map((c) => text(c)?.trim())
        .filter((code) => code && !COUNTRY_CODES.has(code))
        .map((code) => `Country code ${code} is not an ISO 3166-1 alpha-2 code.`);
    },
  },
  { id: 'BR-16', check: (inv) => (inv.lineNodes.length === 0 ? 'An Invoice shall have at least one Invoice line (BG-25).' : undefined) },
  electronicAddressRule('BR-62', 'Seller', 'BT-34'),
  electronicAddressRule('BR-63', 'Buyer', 'BT-49'),
  {
    id: 'BR-CO-26',
    check(inv) {
      const s = inv.seller;
      if (s && !(kids(s, 'ID').length || kids(s, 'GlobalID').length || !blank(textAt(s, 'SpecifiedLegalOrganization/ID')) || inv.sellerHasVa)) {
        return 'The Seller identifier (BT-29), the Seller legal registration identifier (BT-30) and/or the Seller VAT identifier (BT-31) shall be present.';
      }
    },
  },
  {
    id: 'BR-CO-09',
    check(inv) {
      const ids = all(inv.agreement, 'SellerTradeParty/SpecifiedTaxRegistration/ID').concat(
        all(inv.agreement, 'BuyerTradeParty/SpecifiedTaxRegistration/ID'),
        all(inv.agreement, 'SellerTaxRepresentativeTradeParty/SpecifiedTaxRegistration/ID'),
      );
      return ids
        .filter((id) => attr(id, 'schemeID') === 'VA')
        .map((id) => (text(id) ?? '').trim())
        .filter((v) => !VAT_PREFIXES.has(v.slice(0, 2)))
        .map((v) => `VAT identifier "${v}" shall have an ISO 3166-1 alpha-2 prefix (or EL).`);
    },
  },
  {
    // Fails closed on what this checker does not model.
    id: 'X-UNSUPPORTED',
    check(inv) {
      const allowanceCount =
        inv.headerAllowanceCharges.length +
        inv.lineNodes.reduce(
          (n, l) =>
            n +
            all(l, 'SpecifiedLineTradeSettlement/SpecifiedTradeAllowanceCharge').length +
            all(l, 'SpecifiedLineTradeAgreement/NetPriceProductTradePrice/AppliedTradeAllowanceCharge').length,
          0,
        );
      if (allowanceCount > 0) return 'Allowances and charges (BG-20, BG-21, BG-27, BG-28) are not verified by this checker.';
    },
  },
];

/** Payment instructions (BG-16), run per SpecifiedTradeSettlementPaymentMeans. */
export const paymentMeansRules: ReadonlyArray<Rule<PaymentMeansCtx>> = [
  { id: 'BR-49', check: (pm) => (blank(pm.code) ? 'A Payment instruction (BG-16) shall specify the Payment means type code (BT-81).' : undefined) },
  {
    id: 'BR-CL-16',
    check: (pm) => (!blank(pm.code) && !PAYMENT_MEANS_CODES.has(pm.code!) ? `Payment means code ${pm.code} is not in UNTDID 4461 (subset).` : undefined),
  },
  {
    id: 'BR-61',
    check(pm) {
      if (
        (pm.code === '30' || pm.code === '58') &&
        blank(textAt(pm.node, 'PayeePartyCreditorFinancialAccount/IBANID')) &&
        blank(textAt(pm.node, 'PayeePartyCreditorFinancialAccount/ProprietaryID'))
      ) {
        return 'For credit transfer (BT-81 = 30/58) the Payment account identifier (BT-84) shall be present.';
      }
    },
  },
];

/** Preceding invoice references (BG-3), run per InvoiceReferencedDocument. */
export const precedingInvoiceRules: ReadonlyArray<Rule<XNode>> = [
  {
    id: 'BR-55',
    check: (ref) =>
      blank(textAt(ref, 'IssuerAssignedID')) ? 'Each Preceding Invoice reference (BG-3) shall contain a Preceding Invoice reference (BT-25).' : undefined,
  },
];
