import Decimal from 'decimal.js';
/** UBL 2.1 Invoice and CreditNote (EN 16931, XRechnung UBL, Peppol BIS 3) into the inbound model. */
import type { InboundAllowanceCharge, InboundInvoice, InboundLine, InboundVatBreakdown } from './types';
import { type Numbers, type XNode, attr, child, isoDate, kids, refuse, text } from './xmlTree';
import { checkLine } from './lineChecks';

function party(p: XNode | undefined) {
  const schemes = kids(p, 'PartyTaxScheme');
  const vat = schemes.find((s) => (text(s, 'TaxScheme', 'ID') ?? '').toUpperCase() === 'VAT');
  const other = schemes.find((s) => s !== vat);
  return {
    name: text(p, 'PartyLegalEntity', 'RegistrationName') ?? text(p, 'PartyName', 'Name'),
    vatId: text(vat, 'CompanyID'),
    taxNumber: text(other, 'CompanyID'),
    address: p && child(p, 'PostalAddress'),
    email: text(p, 'Contact', 'ElectronicMail'),
  };
}

function taxCategory(node: XNode | undefined, n: Numbers, what: string) {
  return { vatCategory: text(node, 'ID'), vatRate: n.decimal(text(node, 'Percent'), `${what} VAT rate`) };
}

export function readUbl(doc: XNode, root: 'Invoice' | 'CreditNote', n: Numbers): InboundInvoice {
  const currency = text(doc, 'DocumentCurrencyCode') ?? refuse('the document currency (BT-5) is missing');
  const seller = party(child(doc, 'AccountingSupplierParty', 'Party'));
  const buyer = party(child(doc, 'AccountingCustomerParty', 'Party'));
  const address = seller.address;
  const lineTag = root === 'Invoice' ? 'InvoiceLine' : 'CreditNoteLine';
  const qtyTag = root === 'Invoice' ? 'InvoicedQuantity' : 'CreditedQuantity';

  const lines: InboundLine[] = kids(doc, lineTag).map((l, i) => {
    const what = `line ${i + 1}`;
    const qty = child(l, qtyTag);
    const line: InboundLine = {
      quantity: n.decimal(text(qty), `${what} quantity`) ?? refuse(`${what} has no quantity`),
      unitCode: attr(qty, 'unitCode'),
      name: text(l, 'Item', 'Name'),
      netPrice: n.decimal(text(l, 'Price', 'PriceAmount'), `${what} net price`),
      netAmount: n.requiredAmount(text(l, 'LineExtensionAmount'), `${what} net amount`),
      ...taxCategory(child(l, 'Item', 'ClassifiedTaxCategory'), n, what),
    };
    checkLine(line, what, root === 'Invoice' ? 'invoice' : 'creditNote', n);
    return line;
  });

  const allowances: InboundAllowanceCharge[] = [];
  const charges: InboundAllowanceCharge[] = [];
  kids(doc, 'AllowanceCharge').forEach((ac, i) => {
    const isCharge = (text(ac, 'ChargeIndicator') ?? '').toLowerCase() === 'true';
    const what = `document ${isCharge ? 'charge' : 'allowance'} ${i + 1}`;
    (isCharge ? charges : allowances).push({
      amount: n.requiredAmount(text(ac, 'Amount'), `${what} amount`),
      reason: text(ac, 'AllowanceChargeReason') ?? text(ac, 'AllowanceChargeReasonCode'),
      ...taxCategory(child(ac, 'TaxCategory'), n, what),
    });
  });

  // BT-110 is the TaxTotal in the document currency; a second one in the tax currency is BT-111.
  const taxTotals = kids(doc, 'TaxTotal');
  const taxTotal = taxTotals.find((t) => (attr(child(t, 'TaxAmount'), 'currencyID') ?? currency) === currency) ?? taxTotals[0];
  const vatBreakdown: InboundVatBreakdown[] = kids(taxTotal, 'TaxSubtotal').map((s, i) => {
    const cat = child(s, 'TaxCategory');
    const what = `VAT breakdown ${i + 1}`;
    return {
      category: text(cat, 'ID'),
      rate: n.decimal(text(cat, 'Percent'), `${what} rate`),
      basis: n.requiredAmount(text(s, 'TaxableAmount'), `${what} basis`),
      tax: n.requiredAmount(text(s, 'TaxAmount'), `${what} tax`),
      exemptionReason: text(cat, 'TaxExemptionReason'),
      exemptionCode: text(cat, 'TaxExemptionReasonCode'),
    };
  });

  const m = child(doc, 'LegalMonetaryTotal');
  // XRechnung extension: amounts paid to third parties (BT-DEX-002) are added to BT-115.
  const thirdParty = kids(doc, 'PrepaidPayment').map((p, i) => n.requiredAmount(text(p, 'PaidAmount'), `third-party payment ${i + 1}`));
  const dueDate = text(doc, 'DueDate') ?? text(doc, 'PaymentMeans', 'PaymentDueDate');
  const transfer = kids(doc, 'PaymentMeans').find((pm) => child(pm, 'PayeeFinancialAccount'));
  const means = transfer ?? kids(doc, 'PaymentMeans')[0];
  const buyerAddress = buyer.address;
  const deliveryDate = text(doc, 'Delivery', 'ActualDeliveryDate');
  return {
    kind: root === 'Invoice' ? 'invoice' : 'creditNote',
    number: text(doc, 'ID') ?? refuse('the invoice number (BT-1) is missing'),
    issueDate: isoDate(text(doc, 'IssueDate'), 'the issue date (BT-2)') ?? refuse('the issue date (BT-2) is missing'),
    dueDate: isoDate(dueDate, 'the due date (BT-9)'),
    currency,
    buyerReference: text(doc, 'BuyerReference'),
    orderReference: text(doc, 'OrderReference', 'ID'),
    precedingInvoiceNumber: text(doc, 'BillingReference', 'InvoiceDocumentReference', 'ID'),
    seller: {
      name: seller.name,
      vatId: seller.vatId,
      taxNumber: seller.taxNumber,
      address: {
        lines: [text(address, 'StreetName'), text(address, 'AdditionalStreetName'), text(address, 'AddressLine', 'Line')].filter(
          (s): s is string => s !== null,
        ),
        city: text(address, 'CityName'),
        postcode: text(address, 'PostalZone'),
        country: text(address, 'Country', 'IdentificationCode'),
      },
      iban: text(transfer, 'PayeeFinancialAccount', 'ID'),
      email: seller.email,
    },
    buyer: { name: buyer.name, vatId: buyer.vatId },
    lines,
    allowances,
    charges,
    vatBreakdown,
    totals: {
      lineNet: n.amount(text(m, 'LineExtensionAmount'), 'BT-106'),
      allowances: n.amount(text(m, 'AllowanceTotalAmount'), 'BT-107'),
      charges: n.amount(text(m, 'ChargeTotalAmount'), 'BT-108'),
      net: n.amount(text(m, 'TaxExclusiveAmount'), 'BT-109'),
      tax: n.amount(text(taxTotal, 'TaxAmount'), 'BT-110'),
      gross: n.amount(text(m, 'TaxInclusiveAmount'), 'BT-112'),
      prepaid: n.amount(text(m, 'PrepaidAmount'), 'BT-113'),
      rounding: n.amount(text(m, 'PayableRoundingAmount'), 'BT-114'),
      due: n.amount(text(m, 'PayableAmount'), 'BT-115'),
      thirdPartyPayments: thirdParty.length ? thirdParty.reduce((a, v) => a.plus(v), new Decimal(0)).toFixed(2) : null,
    },
    presentation: {
      notes: kids(doc, 'Note')
        .map((x) => text(x))
        .filter((x): x is string => x !== null),
      paymentTerms: text(doc, 'PaymentTerms', 'Note'),
      paymentMeansCode: text(means, 'PaymentMeansCode'),
      remittanceInformation: text(means, 'PaymentID'),
      accountName: text(transfer, 'PayeeFinancialAccount', 'Name'),
      bic: text(transfer, 'PayeeFinancialAccount', 'FinancialInstitutionBranch', 'ID'),
      deliveryDate: deliveryDate && /^\d{4}-\d{2}-\d{2}$/.test(deliveryDate) ? deliveryDate : null,
      buyerAddress: buyerAddress
        ? {
            lines: [text(buyerAddress, 'StreetName'), text(buyerAddress, 'AdditionalStreetName'), text(buyerAddress, 'AddressLine', 'Line')].filter(
              (x): x is string => x !== null,
            ),
            city: text(buyerAddress, 'CityName'),
            postcode: text(buyerAddress, 'PostalZone'),
            country: text(buyerAddress, 'Country', 'IdentificationCode'),
          }
        : null,
      lineIds: kids(doc, lineTag).map((l) => text(l, 'ID')),
      lineDescriptions: kids(doc, lineTag).map((l) => text(l, 'Item', 'Description')),
    },
  };
}
