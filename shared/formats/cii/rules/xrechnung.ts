/**
 * The XRechnung 3.0 CIUS rules (BR-DE-*, and the Peppol rules the KoSIT Schematron adds for CII)
 * that our data can break, re-implemented like the EN 16931 tables beside this module. Each
 * message says what to fill in; only the Schematron's fatal rules are here, its warnings (BR-DE-17,
 * -19, -21, -26, -27, -28) are not reasons to refuse a document. Rule list: docs/e-invoicing.md,
 * "XRechnung".
 */
import type { InvoiceCtx, Rule } from './context';
import { attr, blank, kids, one, textAt } from './xmlNodes';
import { XRECHNUNG_GUIDELINE_ID } from '../ciiInvoice';

const sellerAddress = (inv: InvoiceCtx) => one(inv.seller, 'PostalTradeAddress');
const buyerAddress = (inv: InvoiceCtx) => one(inv.buyer, 'PostalTradeAddress');
const sellerContact = (inv: InvoiceCtx) => one(inv.seller, 'DefinedTradeContact');
const SETTINGS = 'PUT /api/settings';

/** Categories for which the seller must be identified for VAT (BR-DE-16). */
const VAT_CATEGORIES = new Set(['S', 'Z', 'E', 'AE', 'K', 'G', 'L', 'M']);

export const xrechnungRules: ReadonlyArray<Rule<InvoiceCtx>> = [
  {
    id: 'BR-DE-21',
    // A warning in the Schematron; we never write another identifier, so a mismatch is our bug.
    check: (inv) =>
      textAt(inv.root, 'ExchangedDocumentContext/GuidelineSpecifiedDocumentContextParameter/ID')?.trim() !== XRECHNUNG_GUIDELINE_ID
        ? `The Specification identifier (BT-24) must be ${XRECHNUNG_GUIDELINE_ID}.`
        : undefined,
  },
  {
    id: 'PEPPOL-EN16931-R001',
    check: (inv) =>
      blank(textAt(inv.root, 'ExchangedDocumentContext/BusinessProcessSpecifiedDocumentContextParameter/ID'))
        ? 'The Business process (BT-23) must be provided.'
        : undefined,
  },
  {
    id: 'BR-DE-1',
    check: (inv) =>
      inv.paymentMeans.length === 0
        ? `Payment instructions (BG-16) must be provided: set the tenant's IBAN (${SETTINGS}, iban) so that the invoice names the account to pay to.`
        : undefined,
  },
  {
    id: 'BR-DE-15',
    check: (inv) =>
      blank(textAt(inv.agreement, 'BuyerReference'))
        ? 'The Buyer reference (BT-10) must be provided: set buyerReference on the invoice or on its customer (for German public buyers the Leitweg-ID, e.g. 04011000-12345-03).'
        : undefined,
  },
  {
    id: 'BR-DE-16',
    check(inv) {
      if (!inv.lines.some((l) => l.category !== undefined && VAT_CATEGORIES.has(l.category))) return undefined;
      const ids = kids(inv.seller, 'SpecifiedTaxRegistration').filter((r) => {
        const id = one(r, 'ID');
        return ['VA', 'VAT', 'FC'].includes(attr(id, 'schemeID') ?? '') && !blank(textAt(r, 'ID'));
      });
      if (ids.length === 0 && !one(inv.agreement, 'SellerTaxRepresentativeTradeParty'))
        return `The seller's VAT identifier (BT-31) or tax number (BT-32) must be provided: set vatId or taxNumber (${SETTINGS}).`;
    },
  },
  {
    id: 'BR-DE-2',
    check: (inv) =>
      !sellerContact(inv) ? `The Seller contact (BG-6) must be provided: set contactName, contactPhone and contactEmail (${SETTINGS}).` : undefined,
  },
  {
    id: 'BR-DE-3',
    check: (inv) =>
      blank(textAt(sellerAddress(inv), 'CityName'))
        ? `The Seller city (BT-37) must be provided: the tenant's address (${SETTINGS}, address) needs a line with post code and city, e.g. "10115 Berlin".`
        : undefined,
  },
  {
    id: 'BR-DE-4',
    check: (inv) =>
      blank(textAt(sellerAddress(inv), 'PostcodeCode'))
        ? `The Seller post code (BT-38) must be provided: the tenant's address (${SETTINGS}, address) needs a line with post code and city, e.g. "10115 Berlin".`
        : undefined,
  },
  {
    id: 'BR-DE-5',
    check(inv) {
      const c = sellerContact(inv);
      if (c && blank(textAt(c, 'PersonName')) && blank(textAt(c, 'DepartmentName')))
        return `The Seller contact point (BT-41) must be provided: set contactName (${SETTINGS}), a person or department.`;
    },
  },
  {
    id: 'BR-DE-6',
    check(inv) {
      const c = sellerContact(inv);
      if (c && blank(textAt(c, 'TelephoneUniversalCommunication/CompleteNumber')))
        return `The Seller contact telephone number (BT-42) must be provided: set contactPhone (${SETTINGS}).`;
    },
  },
  {
    id: 'BR-DE-7',
    check(inv) {
      const c = sellerContact(inv);
      if (c && blank(textAt(c, 'EmailURIUniversalCommunication/URIID')))
        return `The Seller contact email address (BT-43) must be provided: set contactEmail (${SETTINGS}).`;
    },
  },
  {
    id: 'BR-DE-8',
    check: (inv) =>
      blank(textAt(buyerAddress(inv), 'CityName'))
        ? 'The Buyer city (BT-52) must be provided: the customer\'s address needs a line with post code and city, e.g. "14467 Potsdam".'
        : undefined,
  },
  {
    id: 'BR-DE-9',
    check: (inv) =>
      blank(textAt(buyerAddress(inv), 'PostcodeCode'))
        ? 'The Buyer post code (BT-53) must be provided: the customer\'s address needs a line with post code and city, e.g. "14467 Potsdam".'
        : undefined,
  },
  {
    id: 'BR-DE-10',
    check(inv) {
      const shipTo = one(inv.tx, 'ApplicableHeaderTradeDelivery/ShipToTradeParty/PostalTradeAddress');
      if (shipTo && blank(textAt(shipTo, 'CityName'))) return "The Deliver to city (BT-77) must be provided: the customer's address needs a city.";
    },
  },
  {
    id: 'BR-DE-11',
    check(inv) {
      const shipTo = one(inv.tx, 'ApplicableHeaderTradeDelivery/ShipToTradeParty/PostalTradeAddress');
      if (shipTo && blank(textAt(shipTo, 'PostcodeCode')))
        return "The Deliver to post code (BT-78) must be provided: the customer's address needs a post code.";
    },
  },
  {
    id: 'BR-DE-14',
    check: (inv) =>
      inv.breakdown.some((g) => blank(textAt(g, 'RateApplicablePercent'))) ? 'Every VAT breakdown must have a VAT category rate (BT-119).' : undefined,
  },
  {
    id: 'BR-DE-18-a',
    check: (inv) =>
      kids(inv.settlement, 'SpecifiedTradePaymentTerms').some((t) => kids(t, 'Description').length > 1)
        ? 'Payment terms (BT-20) must not be given more than once.'
        : undefined,
  },
  {
    id: 'BR-DE-23-a',
    check: (inv) =>
      inv.paymentMeans.some(
        (m) =>
          (m.code === '30' || m.code === '58') &&
          blank(textAt(m.node, 'PayeePartyCreditorFinancialAccount/IBANID')) &&
          blank(textAt(m.node, 'PayeePartyCreditorFinancialAccount/ProprietaryID')),
      )
        ? `A credit transfer (BT-81 30 or 58) must name the account (BG-17): set the tenant's IBAN (${SETTINGS}, iban).`
        : undefined,
  },
  {
    id: 'BR-DE-23-b',
    check: (inv) =>
      inv.paymentMeans.some(
        (m) =>
          (m.code === '30' || m.code === '58') && (one(m.node, 'ApplicableTradeSettlementFinancialCard') || one(m.node, 'PayerPartyDebtorFinancialAccount')),
      )
        ? 'A credit transfer (BT-81 30 or 58) must not carry payment card (BG-18) or direct debit (BG-19) data.'
        : undefined,
  },
  {
    id: 'PEPPOL-EN16931-R020',
    check: (inv) =>
      blank(textAt(inv.seller, 'URIUniversalCommunication/URIID'))
        ? `The Seller electronic address (BT-34) must be provided: set peppolId (${SETTINGS}), or a VAT ID or e-mail address.`
        : undefined,
  },
  {
    id: 'PEPPOL-EN16931-R010',
    check: (inv) =>
      blank(textAt(inv.buyer, 'URIUniversalCommunication/URIID'))
        ? "The Buyer electronic address (BT-49) must be provided: set the customer's peppolId (e.g. 0204 + Leitweg-ID), VAT ID or e-mail address."
        : undefined,
  },
];
