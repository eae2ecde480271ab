/**
 * What the EN 16931 rules read, looked up once per document: the invoice, each line, each VAT
 * breakdown group, the totals. A rule is one small function over one of these contexts, so the
 * runner (../en16931Rules.ts) can evaluate the rules of a section per line or per group, in the
 * order the findings have always come out.
 */
import Decimal from 'decimal.js';
import { num } from './values';
import { all, attr, blank, kids, one, text, textAt, type XNode } from './xmlNodes';

/** A rule's messages (without the "[id] " prefix the runner adds); nothing when it passes. */
export type Finding = string | readonly string[] | undefined;

export interface Rule<C> {
  /** BR-…, BR-CO-…, BR-S-…, BR-DEC-…, BR-CL-… or a project rule X-…. */
  readonly id: string;
  check(ctx: C): Finding;
}

export interface LineCtx {
  node: XNode;
  /** BT-126, or "#n" when it is missing. */
  id: string;
  /** "line <id>", appended to the messages. */
  where: string;
  qtyNode: XNode | undefined;
  unit: string | undefined;
  netText: string | undefined;
  net: Decimal | null;
  priceText: string | undefined;
  price: Decimal | null;
  category: string | undefined;
  rateText: string | undefined;
  rate: Decimal | null;
}

export interface GroupCtx {
  node: XNode;
  /** "VAT breakdown #n", appended to the messages. */
  where: string;
  basisText: string | undefined;
  calcText: string | undefined;
  rateText: string | undefined;
  basis: Decimal | null;
  calc: Decimal | null;
  rate: Decimal | null;
  cat: string | undefined;
  reasonPresent: boolean;
  reasonCode: string | undefined;
}

export interface TotalsCtx {
  /** SpecifiedTradeSettlementHeaderMonetarySummation; the other fields are empty without it. */
  node: XNode | undefined;
  t: (name: string) => string | undefined;
  lineTotalText: string | undefined;
  basisText: string | undefined;
  grandText: string | undefined;
  dueText: string | undefined;
  allowanceText: string | undefined;
  chargeText: string | undefined;
  /** TaxTotalAmount elements in the invoice currency (BR-CO-15). */
  taxInCurrency: XNode[];
  taxTotalText: string | undefined;
  lineTotal: Decimal | null;
  basisTotal: Decimal | null;
  grand: Decimal | null;
  due: Decimal | null;
  taxTotal: Decimal | null;
  /** Absent amounts count as 0, as in the Schematron. */
  allowance: Decimal;
  charge: Decimal;
  prepaid: Decimal;
  rounding: Decimal;
}

export interface PaymentMeansCtx {
  node: XNode;
  code: string | undefined;
}

export interface InvoiceCtx {
  root: XNode;
  doc: XNode | undefined;
  tx: XNode | undefined;
  agreement: XNode | undefined;
  settlement: XNode | undefined;
  seller: XNode | undefined;
  buyer: XNode | undefined;
  currency: string | undefined;
  issueDate: XNode | undefined;
  periodStart: XNode | undefined;
  periodEnd: XNode | undefined;
  /** BT-72 (ActualDeliverySupplyChainEvent). */
  deliveryDate: XNode | undefined;
  /** BT-80 (ShipToTradeParty country). */
  shipToCountry: string | undefined;
  lineNodes: XNode[];
  breakdown: XNode[];
  /** Document level allowances and charges (BG-20, BG-21). */
  headerAllowanceCharges: XNode[];
  sellerHasVa: boolean;
  sellerHasVaOrFc: boolean;
  taxRepHasVa: boolean;
  buyerHasVa: boolean;
  buyerHasLegalId: boolean;
  lines: LineCtx[];
  groups: GroupCtx[];
  totals: TotalsCtx;
  paymentMeans: PaymentMeansCtx[];
  precedingInvoices: XNode[];
}

function lineCtx(line: XNode, i: number): LineCtx {
  const id = textAt(line, 'AssociatedDocumentLineDocument/LineID')?.trim() || `#${i + 1}`;
  const qtyNode = one(line, 'SpecifiedLineTradeDelivery/BilledQuantity');
  const netText = textAt(line, 'SpecifiedLineTradeSettlement/SpecifiedTradeSettlementLineMonetarySummation/LineTotalAmount');
  const priceText = textAt(line, 'SpecifiedLineTradeAgreement/NetPriceProductTradePrice/ChargeAmount');
  const tax = kids(one(line, 'SpecifiedLineTradeSettlement'), 'ApplicableTradeTax').find((t) => textAt(t, 'TypeCode')?.trim().toUpperCase() === 'VAT');
  return {
    node: line,
    id,
    where: `line ${id}`,
    qtyNode,
    unit: attr(qtyNode, 'unitCode'),
    netText,
    net: num(netText),
    priceText,
    price: num(priceText),
    category: textAt(tax, 'CategoryCode')?.trim(),
    rateText: textAt(tax, 'RateApplicablePercent'),
    rate: num(textAt(tax, 'RateApplicablePercent')),
  };
}

function groupCtx(b: XNode, i: number): GroupCtx {
  const basisText = textAt(b, 'BasisAmount');
  const calcText = textAt(b, 'CalculatedAmount');
  const rateText = textAt(b, 'RateApplicablePercent');
  return {
    node: b,
    where: `VAT breakdown #${i + 1}`,
    basisText,
    calcText,
    rateText,
    basis: num(basisText),
    calc: num(calcText),
    rate: num(rateText),
    cat: textAt(b, 'CategoryCode')?.trim(),
    reasonPresent: !blank(textAt(b, 'ExemptionReason')) || !blank(textAt(b, 'ExemptionReasonCode')),
    reasonCode: textAt(b, 'ExemptionReasonCode')?.trim(),
  };
}

function totalsCtx(totals: XNode | undefined, currency: string | undefined): TotalsCtx {
  const t = (name: string) => textAt(totals, name);
  const zero = new Decimal(0);
  const taxInCurrency = kids(totals, 'TaxTotalAmount').filter((n) => attr(n, 'currencyID')?.trim() === currency);
  const taxTotalText = text(taxInCurrency[0]);
  return {
    node: totals,
    t,
    lineTotalText: t('LineTotalAmount'),
    basisText: t('TaxBasisTotalAmount'),
    grandText: t('GrandTotalAmount'),
    dueText: t('DuePayableAmount'),
    allowanceText: t('AllowanceTotalAmount'),
    chargeText: t('ChargeTotalAmount'),
    taxInCurrency,
    taxTotalText,
    lineTotal: num(t('LineTotalAmount')),
    basisTotal: num(t('TaxBasisTotalAmount')),
    grand: num(t('GrandTotalAmount')),
    due: num(t('DuePayableAmount')),
    taxTotal: num(taxTotalText),
    allowance: num(t('AllowanceTotalAmount')) ?? zero,
    charge: num(t('ChargeTotalAmount')) ?? zero,
    prepaid: num(t('TotalPrepaidAmount')) ?? zero,
    rounding: num(t('RoundingAmount')) ?? zero,
  };
}

/** Looks up everything the rules read from a parsed CrossIndustryInvoice root element. */
export function invoiceCtx(root: XNode): InvoiceCtx {
  const doc = one(root, 'ExchangedDocument');
  const tx = one(root, 'SupplyChainTradeTransaction');
  const agreement = one(tx, 'ApplicableHeaderTradeAgreement');
  const settlement = one(tx, 'ApplicableHeaderTradeSettlement');
  const seller = one(agreement, 'SellerTradeParty');
  const buyer = one(agreement, 'BuyerTradeParty');
  const lineNodes = kids(tx, 'IncludedSupplyChainTradeLineItem');
  const breakdown = kids(settlement, 'ApplicableTradeTax');
  const currency = textAt(settlement, 'InvoiceCurrencyCode')?.trim();
  const sellerTaxIds = kids(seller, 'SpecifiedTaxRegistration').map((r) => one(r, 'ID'));
  return {
    root,
    doc,
    tx,
    agreement,
    settlement,
    seller,
    buyer,
    currency,
    issueDate: all(doc, 'IssueDateTime/DateTimeString').find((n) => attr(n, 'format') === '102'),
    periodStart: one(settlement, 'BillingSpecifiedPeriod/StartDateTime/DateTimeString'),
    periodEnd: one(settlement, 'BillingSpecifiedPeriod/EndDateTime/DateTimeString'),
    deliveryDate: one(tx, 'ApplicableHeaderTradeDelivery/ActualDeliverySupplyChainEvent/OccurrenceDateTime/DateTimeString'),
    shipToCountry: textAt(tx, 'ApplicableHeaderTradeDelivery/ShipToTradeParty/PostalTradeAddress/CountryID')?.trim() || undefined,
    lineNodes,
    breakdown,
    headerAllowanceCharges: all(settlement, 'SpecifiedTradeAllowanceCharge'),
    sellerHasVa: sellerTaxIds.some((id) => attr(id, 'schemeID') === 'VA' && !blank(text(id))),
    sellerHasVaOrFc: sellerTaxIds.some((id) => ['VA', 'FC'].includes(attr(id, 'schemeID') ?? '') && !blank(text(id))),
    taxRepHasVa: all(agreement, 'SellerTaxRepresentativeTradeParty/SpecifiedTaxRegistration/ID').some((id) => attr(id, 'schemeID') === 'VA'),
    buyerHasVa: all(buyer, 'SpecifiedTaxRegistration/ID').some((id) => attr(id, 'schemeID') === 'VA' && !blank(text(id))),
    buyerHasLegalId: !blank(textAt(buyer, 'SpecifiedLegalOrganization/ID')),
    lines: lineNodes.map(lineCtx),
    groups: breakdown.map(groupCtx),
    totals: totalsCtx(one(settlement, 'SpecifiedTradeSettlementHeaderMonetarySummation'), currency),
    paymentMeans: kids(settlement, 'SpecifiedTradeSettlementPaymentMeans').map((node) => ({ node, code: textAt(node, 'TypeCode')?.trim() })),
    precedingInvoices: kids(settlement, 'InvoiceReferencedDocument'),
  };
}
