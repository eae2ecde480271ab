/** UN/CEFACT CII D16B (XRechnung CII, Factur-X / ZUGFeRD 2.x XML) into the inbound model. */
import type { InboundAllowanceCharge, InboundInvoice, InboundLine, InboundVatBreakdown } from './types';
import { checkLine } from './lineChecks';
import { type Numbers, type XNode, attr, child, isoDate, kids, refuse, text } from './xmlTree';

// UNTDID 1001 codes EN 16931 allows for credit notes; every other type code reads as an invoice
// (380, 384 corrected, 389 self-billed, 386 prepayment, 875/876/877 partial construction).
const CREDIT_NOTE_TYPES = new Set(['381', '261', '262', '296', '308', '396', '420', '458', '532']);

function party(p: XNode | undefined) {
  const regs = kids(p, 'SpecifiedTaxRegistration');
  const byScheme = (scheme: string) =>
    text(
      regs.find((r) => attr(child(r, 'ID'), 'schemeID') === scheme),
      'ID',
    );
  return {
    name: text(p, 'Name'),
    vatId: byScheme('VA'),
    taxNumber: byScheme('FC'),
    address: child(p, 'PostalTradeAddress'),
    email: text(p, 'DefinedTradeContact', 'EmailURIUniversalCommunication', 'URIID'),
  };
}

function dateOf(node: XNode | undefined, what: string): string | null {
  const dt = child(node, 'DateTimeString');
  const format = attr(dt, 'format');
  if (dt && format && format !== '102') refuse(`${what} uses date format ${format}; CII invoices use 102 (YYYYMMDD)`);
  return isoDate(text(dt), what);
}

export function readCii(doc: XNode, n: Numbers): InboundInvoice {
  const exchanged = child(doc, 'ExchangedDocument');
  const tx = child(doc, 'SupplyChainTradeTransaction') ?? refuse('the CII document has no SupplyChainTradeTransaction');
  const agreement = child(tx, 'ApplicableHeaderTradeAgreement');
  const settlement = child(tx, 'ApplicableHeaderTradeSettlement');
  const currency = text(settlement, 'InvoiceCurrencyCode') ?? refuse('the document currency (BT-5) is missing');
  const typeCode = text(exchanged, 'TypeCode') ?? '380';
  const kind = CREDIT_NOTE_TYPES.has(typeCode) ? 'creditNote' : 'invoice';
  const seller = party(child(agreement, 'SellerTradeParty'));
  const buyer = party(child(agreement, 'BuyerTradeParty'));

  const lines: InboundLine[] = kids(tx, 'IncludedSupplyChainTradeLineItem').map((l, i) => {
    const what = `line ${i + 1}`;
    const qty = child(l, 'SpecifiedLineTradeDelivery', 'BilledQuantity');
    const lineTax = child(l, 'SpecifiedLineTradeSettlement', 'ApplicableTradeTax');
    const line: InboundLine = {
      quantity: n.decimal(text(qty), `${what} quantity`) ?? refuse(`${what} has no quantity`),
      unitCode: attr(qty, 'unitCode'),
      name: text(l, 'SpecifiedTradeProduct', 'Name'),
      netPrice: n.decimal(text(l, 'SpecifiedLineTradeAgreement', 'NetPriceProductTradePrice', 'ChargeAmount'), `${what} net price`),
      netAmount: n.requiredAmount(
        text(l, 'SpecifiedLineTradeSettlement', 'SpecifiedTradeSettlementLineMonetarySummation', 'LineTotalAmount'),
        `${what} net amount`,
      ),
      vatCategory: text(lineTax, 'CategoryCode'),
      vatRate: n.decimal(text(lineTax, 'RateApplicablePercent'), `${what} VAT rate`),
    };
    checkLine(line, what, kind, n);
    return line;
  });

  const allowances: InboundAllowanceCharge[] = [];
  const charges: InboundAllowanceCharge[] = [];
  kids(settlement, 'SpecifiedTradeAllowanceCharge').forEach((ac, i) => {
    const isCharge = (text(ac, 'ChargeIndicator', 'Indicator') ?? '').toLowerCase() === 'true';
    const what = `document ${isCharge ? 'charge' : 'allowance'} ${i + 1}`;
    const tax = child(ac, 'CategoryTradeTax');
    (isCharge ? charges : allowances).push({
      amount: n.requiredAmount(text(ac, 'ActualAmount'), `${what} amount`),
      reason: text(ac, 'Reason') ?? text(ac, 'ReasonCode'),
      vatCategory: text(tax, 'CategoryCode'),
      vatRate: n.decimal(text(tax, 'RateApplicablePercent'), `${what} VAT rate`),
    });
  });

  const vatBreakdown: InboundVatBreakdown[] = kids(settlement, 'ApplicableTradeTax').map((t, i) => {
    const what = `VAT breakdown ${i + 1}`;
    return {
      category: text(t, 'CategoryCode'),
      rate: n.decimal(text(t, 'RateApplicablePercent'), `${what} rate`),
      basis: n.requiredAmount(text(t, 'BasisAmount'), `${what} basis`),
      // Exempt categories may leave BT-117 out in the lower profiles; it is zero then.
      tax: n.amount(text(t, 'CalculatedAmount'), `${what} tax`) ?? '0.00',
      exemptionReason: text(t, 'ExemptionReason'),
      exemptionCode: text(t, 'ExemptionReasonCode'),
    };
  });

  const m = child(settlement, 'SpecifiedTradeSettlementHeaderMonetarySummation');
  // BT-110 is the TaxTotalAmount in the document currency; one in the tax currency is BT-111.
  const taxTotals = kids(m, 'TaxTotalAmount');
  const taxTotal = taxTotals.find((t) => (attr(t, 'currencyID') ?? currency) === currency) ?? taxTotals[0];
  const address = seller.address;
  const account = kids(settlement, 'SpecifiedTradeSettlementPaymentMeans')
    .map((pm) => text(pm, 'PayeePartyCreditorFinancialAccount', 'IBANID'))
    .find((x) => x !== null);
  const means = kids(settlement, 'SpecifiedTradeSettlementPaymentMeans');
  const transfer = means.find((pm) => child(pm, 'PayeePartyCreditorFinancialAccount')) ?? means[0];
  const buyerAddress = buyer.address;
  const deliveryDate = child(tx, 'ApplicableHeaderTradeDelivery', 'ActualDeliverySupplyChainEvent', 'OccurrenceDateTime');
  const dueDate = kids(settlement, 'SpecifiedTradePaymentTerms')
    .map((t) => child(t, 'DueDateDateTime'))
    .find((d) => d !== undefined);

  return {
    kind,
    number: text(exchanged, 'ID') ?? refuse('the invoice number (BT-1) is missing'),
    issueDate: dateOf(child(exchanged, 'IssueDateTime'), 'the issue date (BT-2)') ?? refuse('the issue date (BT-2) is missing'),
    dueDate: dateOf(dueDate, 'the due date (BT-9)'),
    currency,
    buyerReference: text(agreement, 'BuyerReference'),
    orderReference: text(agreement, 'BuyerOrderReferencedDocument', 'IssuerAssignedID'),
    precedingInvoiceNumber: text(settlement, 'InvoiceReferencedDocument', 'IssuerAssignedID'),
    seller: {
      name: seller.name,
      vatId: seller.vatId,
      taxNumber: seller.taxNumber,
      address: {
        lines: [text(address, 'LineOne'), text(address, 'LineTwo'), text(address, 'LineThree')].filter((s): s is string => s !== null),
        city: text(address, 'CityName'),
        postcode: text(address, 'PostcodeCode'),
        country: text(address, 'CountryID'),
      },
      iban: account ?? null,
      email: seller.email,
    },
    buyer: { name: buyer.name, vatId: buyer.vatId },
    lines,
    allowances,
    charges,
    vatBreakdown,
    totals: {
      lineNet: n.amount(text(m, 'LineTotalAmount'), 'BT-106'),
      allowances: n.amount(text(m, 'AllowanceTotalAmount'), 'BT-107'),
      charges: n.amount(text(m, 'ChargeTotalAmount'), 'BT-108'),
      net: n.amount(text(m, 'TaxBasisTotalAmount'), 'BT-109'),
      tax: n.amount(text(taxTotal), 'BT-110'),
      gross: n.amount(text(m, 'GrandTotalAmount'), 'BT-112'),
      prepaid: n.amount(text(m, 'TotalPrepaidAmount'), 'BT-113'),
      rounding: n.amount(text(m, 'RoundingAmount'), 'BT-114'),
      due: n.amount(text(m, 'DuePayableAmount'), 'BT-115'),
      thirdPartyPayments: null,
    },
    presentation: {
      notes: kids(exchanged, 'IncludedNote')
        .map((x) => text(x, 'Content'))
        .filter((x): x is string => x !== null),
      paymentTerms:
        kids(settlement, 'SpecifiedTradePaymentTerms')
          .map((t) => text(t, 'Description'))
          .find((x) => x !== null) ?? null,
      paymentMeansCode: text(transfer, 'TypeCode'),
      remittanceInformation: text(settlement, 'PaymentReference'),
      accountName: text(transfer, 'PayeePartyCreditorFinancialAccount', 'AccountName'),
      bic: text(transfer, 'PayeeSpecifiedCreditorFinancialInstitution', 'BICID'),
      // Presentation only: a date the booking does not need is not refused when malformed.
      deliveryDate:
        /^(\d{4})(\d{2})(\d{2})$/
          .exec(text(deliveryDate, 'DateTimeString') ?? '')
          ?.slice(1)
          .join('-') ?? null,
      buyerAddress: buyerAddress
        ? {
            lines: [text(buyerAddress, 'LineOne'), text(buyerAddress, 'LineTwo'), text(buyerAddress, 'LineThree')].filter((x): x is string => x !== null),
            city: text(buyerAddress, 'CityName'),
            postcode: text(buyerAddress, 'PostcodeCode'),
            country: text(buyerAddress, 'CountryID'),
          }
        : null,
      lineIds: kids(tx, 'IncludedSupplyChainTradeLineItem').map((l) => text(l, 'AssociatedDocumentLineDocument', 'LineID')),
      lineDescriptions: kids(tx, 'IncludedSupplyChainTradeLineItem').map((l) => text(l, 'SpecifiedTradeProduct', 'Description')),
    },
  };
}
