/**
 * ebInterface 6.0 / 6.1 (Austria) into the inbound model. ebInterface has no BT-106..BT-108
 * fields: those totals stay null (reconcile() computes them from the lines); BT-109 and BT-110
 * are the sums of the VAT breakdown (Tax/TaxItem), as ebInterface defines no other net total.
 */
import Decimal from 'decimal.js';
import type { InboundAllowanceCharge, InboundInvoice, InboundLine, InboundVatBreakdown } from './types';
import { checkLine } from './lineChecks';
import { type Numbers, type XNode, attr, child, isoDate, kids, refuse, text } from './xmlTree';

const CREDIT_TYPES = new Set(['CreditMemo', 'SubsequentCredit']);

function taxItem(node: XNode | undefined, n: Numbers, what: string) {
  const percent = child(node, 'TaxPercent');
  return { vatCategory: attr(percent, 'TaxCategoryCode'), vatRate: n.decimal(text(percent), `${what} VAT rate`) };
}

export function readEbInterface(doc: XNode, n: Numbers): InboundInvoice {
  const currency = attr(doc, 'InvoiceCurrency') ?? refuse('the document currency (InvoiceCurrency) is missing');
  const kind = CREDIT_TYPES.has(attr(doc, 'DocumentType') ?? '') ? 'creditNote' : 'invoice';
  // The XSD requires the cancelled document's number; without it BT-25 cannot be read.
  const cancelled = child(doc, 'CancelledOriginalDocument');
  if (cancelled && text(cancelled, 'InvoiceNumber') === null)
    n.warnings.push('CancelledOriginalDocument has no InvoiceNumber (required by the ebInterface XSD): the preceding invoice is unknown');

  const biller = child(doc, 'Biller');
  const billerAddress = child(biller, 'Address');
  const recipient = child(doc, 'InvoiceRecipient');
  const recipientAddress = child(recipient, 'Address');
  const transfer = child(doc, 'PaymentMethod', 'UniversalBankTransaction');

  const lines: InboundLine[] = [];
  for (const list of kids(child(doc, 'Details'), 'ItemList')) {
    for (const l of kids(list, 'ListLineItem')) {
      const what = `line ${lines.length + 1}`;
      const qty = child(l, 'Quantity');
      const line: InboundLine = {
        quantity: n.decimal(text(qty), `${what} quantity`) ?? refuse(`${what} has no quantity`),
        unitCode: attr(qty, 'Unit'),
        name: text(l, 'Description'),
        netPrice: n.decimal(text(l, 'UnitPrice'), `${what} unit price`),
        netAmount: n.requiredAmount(text(l, 'LineItemAmount'), `${what} amount`),
        ...taxItem(child(l, 'TaxItem'), n, what),
      };
      checkLine(line, what, kind, n);
      lines.push(line);
    }
  }

  const rs = child(doc, 'ReductionAndSurchargeDetails');
  const allowanceCharge = (node: XNode, what: string): InboundAllowanceCharge => ({
    amount: n.requiredAmount(text(node, 'Amount'), `${what} amount`),
    reason: text(node, 'Comment'),
    ...taxItem(child(node, 'TaxItem'), n, what),
  });
  const allowances = kids(rs, 'Reduction').map((r, i) => allowanceCharge(r, `reduction ${i + 1}`));
  const charges = kids(rs, 'Surcharge').map((s, i) => allowanceCharge(s, `surcharge ${i + 1}`));
  if (kids(rs, 'OtherVATableTax').length) n.warnings.push('OtherVATableTax entries are not part of the EN 16931 model and were not read');

  const tax = child(doc, 'Tax');
  const vatBreakdown: InboundVatBreakdown[] = kids(tax, 'TaxItem').map((t, i) => {
    const what = `VAT breakdown ${i + 1}`;
    const { vatCategory, vatRate } = taxItem(t, n, what);
    return {
      category: vatCategory,
      rate: vatRate,
      basis: n.requiredAmount(text(t, 'TaxableAmount'), `${what} basis`),
      tax: n.amount(text(t, 'TaxAmount'), `${what} tax`) ?? '0.00',
      exemptionReason: text(t, 'Comment'),
      exemptionCode: null,
    };
  });
  if (kids(tax, 'OtherTax').length) n.warnings.push('OtherTax entries (non-VAT taxes) are not part of the EN 16931 model and were not read');
  const sum = (values: string[]) => (vatBreakdown.length ? values.reduce((a, v) => a.plus(v), new Decimal(0)).toFixed(2) : null);

  return {
    kind,
    number: text(doc, 'InvoiceNumber') ?? refuse('the invoice number (InvoiceNumber) is missing'),
    issueDate: isoDate(text(doc, 'InvoiceDate'), 'the invoice date') ?? refuse('the invoice date is missing'),
    dueDate: isoDate(text(doc, 'PaymentConditions', 'DueDate'), 'the due date'),
    currency,
    // The recipient's order reference is ebInterface's buyer reference (the federal government's order number).
    buyerReference: text(recipient, 'OrderReference', 'OrderID'),
    orderReference: text(recipient, 'OrderReference', 'OrderID'),
    // A credit note that cancels nothing names the invoice it corrects as a RelatedDocument (as ours do).
    precedingInvoiceNumber:
      text(doc, 'CancelledOriginalDocument', 'InvoiceNumber') ??
      (kind === 'creditNote'
        ? text(
            kids(doc, 'RelatedDocument').find((d) => text(d, 'DocumentType') === 'Invoice'),
            'InvoiceNumber',
          )
        : null),
    seller: {
      name: text(billerAddress, 'Name'),
      vatId: text(biller, 'VATIdentificationNumber'),
      taxNumber: null,
      address: {
        lines: [text(billerAddress, 'Street')].filter((s): s is string => s !== null),
        city: text(billerAddress, 'Town'),
        postcode: text(billerAddress, 'ZIP'),
        country: attr(child(billerAddress, 'Country'), 'CountryCode'),
      },
      iban: text(doc, 'PaymentMethod', 'UniversalBankTransaction', 'BeneficiaryAccount', 'IBAN'),
      email: text(billerAddress, 'Email'),
    },
    buyer: { name: text(recipient, 'Address', 'Name'), vatId: text(recipient, 'VATIdentificationNumber') },
    lines,
    allowances,
    charges,
    vatBreakdown,
    totals: {
      lineNet: null,
      allowances: null,
      charges: null,
      net: sum(vatBreakdown.map((v) => v.basis)),
      tax: sum(vatBreakdown.map((v) => v.tax)),
      gross: n.amount(text(doc, 'TotalGrossAmount'), 'TotalGrossAmount'),
      prepaid: n.amount(text(doc, 'PrepaidAmount'), 'PrepaidAmount'),
      rounding: n.amount(text(doc, 'RoundingAmount') ?? text(doc, 'PayableRoundingAmount'), 'RoundingAmount'),
      due: n.amount(text(doc, 'PayableAmount'), 'PayableAmount'),
      thirdPartyPayments: null,
    },
    presentation: {
      notes: [text(doc, 'Comment')].filter((x): x is string => x !== null),
      paymentTerms: text(doc, 'PaymentConditions', 'Comment'),
      // A bank transfer is ebInterface's one payment means with an account: SEPA credit transfer (58).
      paymentMeansCode: transfer ? '58' : null,
      remittanceInformation: text(transfer, 'PaymentReference'),
      accountName: text(transfer, 'BeneficiaryAccount', 'BankAccountOwner'),
      bic: text(transfer, 'BeneficiaryAccount', 'BIC'),
      deliveryDate: /^\d{4}-\d{2}-\d{2}$/.test(text(doc, 'Delivery', 'Date') ?? '') ? text(doc, 'Delivery', 'Date') : null,
      buyerAddress: recipientAddress
        ? {
            lines: [text(recipientAddress, 'Street')].filter((x): x is string => x !== null),
            city: text(recipientAddress, 'Town'),
            postcode: text(recipientAddress, 'ZIP'),
            country: attr(child(recipientAddress, 'Country'), 'CountryCode'),
          }
        : null,
      lineIds: kids(child(doc, 'Details'), 'ItemList').flatMap((list) => kids(list, 'ListLineItem').map((l) => text(l, 'PositionNumber'))),
      lineDescriptions: lines.map(() => null),
    },
  };
}
