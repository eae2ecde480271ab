/**
 * A UBL 2.1 Invoice or CreditNote projected onto the CII (D16B) elements the EN 16931 rule tables
 * (../cii/rules/) read, so that one implementation of each EN 16931 rule checks both syntaxes: the
 * CEN Schematron itself states each rule once (abstract) and binds it to UBL and to CII paths; this
 * is that binding, for the business terms the rules use. Only used on inbound documents
 * (validate.ts); our own UBL output is checked on the CII rendering of its model instead.
 * Both trees are as parseForRules (../cii/rules/xmlNodes.ts) produces them: every element a
 * list, text in '#text', attributes as '@_name'.
 */
import { all, attr, kids, one, text, textAt, type XNode } from '../cii/rules/xmlNodes';

type Children = Record<string, (XNode | undefined)[] | XNode | undefined>;

/** An element: optional text and attributes, then children (undefined ones left out). */
function el(value?: string, attrs: Record<string, string | undefined> = {}, children: Children = {}): XNode {
  const node: XNode = {};
  if (value !== undefined) node['#text'] = value;
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) node[`@_${k}`] = v;
  for (const [k, v] of Object.entries(children)) {
    const list = (Array.isArray(v) ? v : [v]).filter((x): x is XNode => x !== undefined);
    if (list.length) node[k] = list;
  }
  return node;
}

/** A copied leaf: its text and the given attributes; undefined when the source is absent. */
function leaf(src: XNode | undefined, ...attrNames: string[]): XNode | undefined {
  if (!src) return undefined;
  return el(text(src) ?? '', Object.fromEntries(attrNames.map((a) => [a, attr(src, a)])));
}

/** UBL dates are YYYY-MM-DD, CII format 102 YYYYMMDD; anything else is passed on as written. */
function date(src: XNode | undefined): XNode | undefined {
  if (!src) return undefined;
  const v = (text(src) ?? '').trim();
  return el(undefined, {}, { DateTimeString: el(/^\d{4}-\d{2}-\d{2}$/.test(v) ? v.replaceAll('-', '') : v, { format: '102' }) });
}

const isVat = (scheme: XNode | undefined) => (textAt(scheme, 'TaxScheme/ID')?.trim().toUpperCase() ?? 'VAT') === 'VAT';

/** cac:TaxCategory / cac:ClassifiedTaxCategory → ram:ApplicableTradeTax (or CategoryTradeTax). */
function tradeTax(cat: XNode | undefined, extra: Children = {}): XNode | undefined {
  if (!cat) return undefined;
  return el(
    undefined,
    {},
    {
      ...extra,
      TypeCode: el(isVat(cat) ? 'VAT' : (textAt(cat, 'TaxScheme/ID') ?? '')),
      ExemptionReason: leaf(one(cat, 'TaxExemptionReason')),
      CategoryCode: leaf(one(cat, 'ID')),
      ExemptionReasonCode: leaf(one(cat, 'TaxExemptionReasonCode')),
      RateApplicablePercent: leaf(one(cat, 'Percent')),
    },
  );
}

function address(a: XNode | undefined): XNode | undefined {
  if (!a) return undefined;
  return el(
    undefined,
    {},
    {
      PostcodeCode: leaf(one(a, 'PostalZone')),
      LineOne: leaf(one(a, 'StreetName')),
      CityName: leaf(one(a, 'CityName')),
      CountryID: leaf(one(a, 'Country/IdentificationCode')),
    },
  );
}

/** cac:Party → ram:*TradeParty: BT-27/44 name, BT-29 ids, BT-30/47 legal id, address, VAT id (VA) and tax number (FC). */
function party(p: XNode | undefined): XNode | undefined {
  if (!p) return undefined;
  const schemes = kids(p, 'PartyTaxScheme');
  return el(
    undefined,
    {},
    {
      ID: kids(p, 'PartyIdentification').map((i) => leaf(one(i, 'ID'), 'schemeID')),
      Name: leaf(one(p, 'PartyLegalEntity/RegistrationName')),
      SpecifiedLegalOrganization: one(p, 'PartyLegalEntity/CompanyID') ? el(undefined, {}, { ID: leaf(one(p, 'PartyLegalEntity/CompanyID')) }) : undefined,
      DefinedTradeContact: one(p, 'Contact') ? el() : undefined,
      PostalTradeAddress: address(one(p, 'PostalAddress')),
      SpecifiedTaxRegistration: schemes.map((s) => el(undefined, {}, { ID: el(textAt(s, 'CompanyID') ?? '', { schemeID: isVat(s) ? 'VA' : 'FC' }) })),
    },
  );
}

function allowanceCharge(ac: XNode): XNode {
  return el(
    undefined,
    {},
    {
      ChargeIndicator: el(undefined, {}, { Indicator: el((textAt(ac, 'ChargeIndicator') ?? '').trim().toLowerCase()) }),
      ActualAmount: leaf(one(ac, 'Amount'), 'currencyID'),
      Reason: leaf(one(ac, 'AllowanceChargeReason')),
      CategoryTradeTax: tradeTax(one(ac, 'TaxCategory')),
    },
  );
}

function line(l: XNode, qtyTag: string): XNode {
  const price = one(l, 'Price');
  const grossAmount = one(price, 'AllowanceCharge/BaseAmount');
  return el(
    undefined,
    {},
    {
      AssociatedDocumentLineDocument: el(undefined, {}, { LineID: leaf(one(l, 'ID')) }),
      SpecifiedTradeProduct: el(undefined, {}, { Name: leaf(one(l, 'Item/Name')) }),
      SpecifiedLineTradeAgreement: el(
        undefined,
        {},
        {
          GrossPriceProductTradePrice: grossAmount ? el(undefined, {}, { ChargeAmount: leaf(grossAmount, 'currencyID') }) : undefined,
          NetPriceProductTradePrice: price
            ? el(undefined, {}, { ChargeAmount: leaf(one(price, 'PriceAmount'), 'currencyID'), BasisQuantity: leaf(one(price, 'BaseQuantity'), 'unitCode') })
            : undefined,
        },
      ),
      SpecifiedLineTradeDelivery: el(undefined, {}, { BilledQuantity: leaf(one(l, qtyTag), 'unitCode') }),
      SpecifiedLineTradeSettlement: el(
        undefined,
        {},
        {
          ApplicableTradeTax: tradeTax(one(l, 'Item/ClassifiedTaxCategory')),
          SpecifiedTradeAllowanceCharge: kids(l, 'AllowanceCharge').map(allowanceCharge),
          SpecifiedTradeSettlementLineMonetarySummation: el(undefined, {}, { LineTotalAmount: leaf(one(l, 'LineExtensionAmount'), 'currencyID') }),
        },
      ),
    },
  );
}

/** The CrossIndustryInvoice root element the EN 16931 rules read, from a UBL root element. */
export function ublAsCii(root: XNode, rootName: 'Invoice' | 'CreditNote'): XNode {
  const isInvoice = rootName === 'Invoice';
  const taxTotals = kids(root, 'TaxTotal');
  // The VAT breakdown is the TaxTotal with subtotals (in the document currency).
  const breakdownTotal = taxTotals.find((t) => kids(t, 'TaxSubtotal').length > 0);
  const m = one(root, 'LegalMonetaryTotal');
  const delivery = one(root, 'Delivery');
  const period = one(root, 'InvoicePeriod');
  const dueDate = isInvoice ? one(root, 'DueDate') : all(root, 'PaymentMeans/PaymentDueDate')[0];
  const terms = kids(root, 'PaymentTerms');
  return el(
    undefined,
    {},
    {
      ExchangedDocumentContext: el(
        undefined,
        {},
        {
          BusinessProcessSpecifiedDocumentContextParameter: one(root, 'ProfileID') ? el(undefined, {}, { ID: leaf(one(root, 'ProfileID')) }) : undefined,
          GuidelineSpecifiedDocumentContextParameter: el(undefined, {}, { ID: leaf(one(root, 'CustomizationID')) }),
        },
      ),
      ExchangedDocument: el(
        undefined,
        {},
        {
          ID: leaf(one(root, 'ID')),
          TypeCode: leaf(one(root, isInvoice ? 'InvoiceTypeCode' : 'CreditNoteTypeCode')),
          IssueDateTime: date(one(root, 'IssueDate')),
        },
      ),
      SupplyChainTradeTransaction: el(
        undefined,
        {},
        {
          IncludedSupplyChainTradeLineItem: kids(root, isInvoice ? 'InvoiceLine' : 'CreditNoteLine').map((l) =>
            line(l, isInvoice ? 'InvoicedQuantity' : 'CreditedQuantity'),
          ),
          ApplicableHeaderTradeAgreement: el(
            undefined,
            {},
            {
              BuyerReference: leaf(one(root, 'BuyerReference')),
              SellerTradeParty: party(one(root, 'AccountingSupplierParty/Party')),
              BuyerTradeParty: party(one(root, 'AccountingCustomerParty/Party')),
              SellerTaxRepresentativeTradeParty: party(one(root, 'TaxRepresentativeParty')),
            },
          ),
          ApplicableHeaderTradeDelivery: el(
            undefined,
            {},
            {
              ShipToTradeParty: one(delivery, 'DeliveryLocation/Address')
                ? el(undefined, {}, { PostalTradeAddress: address(one(delivery, 'DeliveryLocation/Address')) })
                : undefined,
              ActualDeliverySupplyChainEvent: one(delivery, 'ActualDeliveryDate')
                ? el(undefined, {}, { OccurrenceDateTime: date(one(delivery, 'ActualDeliveryDate')) })
                : undefined,
            },
          ),
          ApplicableHeaderTradeSettlement: el(
            undefined,
            {},
            {
              TaxCurrencyCode: leaf(one(root, 'TaxCurrencyCode')),
              InvoiceCurrencyCode: leaf(one(root, 'DocumentCurrencyCode')),
              SpecifiedTradeSettlementPaymentMeans: kids(root, 'PaymentMeans').map((pm) =>
                el(
                  undefined,
                  {},
                  {
                    TypeCode: leaf(one(pm, 'PaymentMeansCode')),
                    PayeePartyCreditorFinancialAccount: one(pm, 'PayeeFinancialAccount')
                      ? el(undefined, {}, { IBANID: leaf(one(pm, 'PayeeFinancialAccount/ID')) })
                      : undefined,
                  },
                ),
              ),
              ApplicableTradeTax: kids(breakdownTotal, 'TaxSubtotal').map((s) =>
                tradeTax(one(s, 'TaxCategory'), {
                  CalculatedAmount: leaf(one(s, 'TaxAmount'), 'currencyID'),
                  BasisAmount: leaf(one(s, 'TaxableAmount'), 'currencyID'),
                }),
              ),
              BillingSpecifiedPeriod: period
                ? el(undefined, {}, { StartDateTime: date(one(period, 'StartDate')), EndDateTime: date(one(period, 'EndDate')) })
                : undefined,
              SpecifiedTradeAllowanceCharge: kids(root, 'AllowanceCharge').map(allowanceCharge),
              SpecifiedTradePaymentTerms:
                dueDate || terms.length
                  ? el(undefined, {}, { Description: terms.flatMap((t) => kids(t, 'Note').map((n) => leaf(n))), DueDateDateTime: date(dueDate) })
                  : undefined,
              SpecifiedTradeSettlementHeaderMonetarySummation: m
                ? el(
                    undefined,
                    {},
                    {
                      LineTotalAmount: leaf(one(m, 'LineExtensionAmount'), 'currencyID'),
                      ChargeTotalAmount: leaf(one(m, 'ChargeTotalAmount'), 'currencyID'),
                      AllowanceTotalAmount: leaf(one(m, 'AllowanceTotalAmount'), 'currencyID'),
                      TaxBasisTotalAmount: leaf(one(m, 'TaxExclusiveAmount'), 'currencyID'),
                      TaxTotalAmount: taxTotals.map((t) => leaf(one(t, 'TaxAmount'), 'currencyID')),
                      RoundingAmount: leaf(one(m, 'PayableRoundingAmount'), 'currencyID'),
                      GrandTotalAmount: leaf(one(m, 'TaxInclusiveAmount'), 'currencyID'),
                      TotalPrepaidAmount: leaf(one(m, 'PrepaidAmount'), 'currencyID'),
                      DuePayableAmount: leaf(one(m, 'PayableAmount'), 'currencyID'),
                    },
                  )
                : undefined,
              InvoiceReferencedDocument: all(root, 'BillingReference/InvoiceDocumentReference').map((r) =>
                el(undefined, {}, { IssuerAssignedID: leaf(one(r, 'ID')) }),
              ),
            },
          ),
        },
      ),
    },
  );
}
