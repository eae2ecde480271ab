/**
 * Reads the business terms our UBL writer fills back out of a UBL 2.1 Invoice/CreditNote, as plain
 * strings, so a test can compare them with the model it was written from (round trip).
 */
import { XMLParser } from 'fast-xml-parser';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', removeNSPrefix: true, parseTagValue: false });
const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const txt = (v: Any): string | undefined => (v === undefined ? undefined : typeof v === 'object' ? v['#text'] : String(v));

export interface UblReadBack {
  kind: 'invoice' | 'creditNote';
  number: string;
  issueDate: string;
  currency: string;
  buyerReference?: string;
  orderReference?: string;
  sellerName: string;
  buyerName: string;
  sellerEndpoint?: { scheme: string; id: string };
  buyerEndpoint?: { scheme: string; id: string };
  lines: Array<{ id: string; quantity: string; unitCode: string; net: string; price: string; name: string; category: string; rate?: string }>;
  taxGroups: Array<{ basis: string; tax: string; category: string; rate?: string; reasonCode?: string }>;
  totals: { lineNet: string; net: string; gross: string; prepaid?: string; due: string; tax: string; taxInTaxCurrency?: string };
}

function endpoint(party: Any): { scheme: string; id: string } | undefined {
  const e = party.EndpointID;
  return e === undefined ? undefined : { scheme: e['@_schemeID'], id: e['#text'] };
}

export function readBackUbl(xml: string): UblReadBack {
  const parsed = parser.parse(xml);
  const invoice = parsed.Invoice !== undefined;
  const d = invoice ? parsed.Invoice : parsed.CreditNote;
  const seller = d.AccountingSupplierParty.Party;
  const buyer = d.AccountingCustomerParty.Party;
  const [main, inTaxCurrency] = asArray<Any>(d.TaxTotal).sort((a) => (a.TaxSubtotal ? -1 : 1));
  const t = d.LegalMonetaryTotal;
  return {
    kind: invoice ? 'invoice' : 'creditNote',
    number: d.ID,
    issueDate: d.IssueDate,
    currency: d.DocumentCurrencyCode,
    buyerReference: d.BuyerReference,
    orderReference: d.OrderReference?.ID,
    sellerName: seller.PartyLegalEntity.RegistrationName,
    buyerName: buyer.PartyLegalEntity.RegistrationName,
    sellerEndpoint: endpoint(seller),
    buyerEndpoint: endpoint(buyer),
    lines: asArray<Any>(invoice ? d.InvoiceLine : d.CreditNoteLine).map((l) => {
      const qty = invoice ? l.InvoicedQuantity : l.CreditedQuantity;
      return {
        id: l.ID,
        quantity: qty['#text'],
        unitCode: qty['@_unitCode'],
        net: txt(l.LineExtensionAmount)!,
        price: txt(l.Price.PriceAmount)!,
        name: l.Item.Name,
        category: l.Item.ClassifiedTaxCategory.ID,
        rate: l.Item.ClassifiedTaxCategory.Percent,
      };
    }),
    taxGroups: asArray<Any>(main.TaxSubtotal).map((s) => ({
      basis: txt(s.TaxableAmount)!,
      tax: txt(s.TaxAmount)!,
      category: s.TaxCategory.ID,
      rate: s.TaxCategory.Percent,
      reasonCode: s.TaxCategory.TaxExemptionReasonCode,
    })),
    totals: {
      lineNet: txt(t.LineExtensionAmount)!,
      net: txt(t.TaxExclusiveAmount)!,
      gross: txt(t.TaxInclusiveAmount)!,
      prepaid: txt(t.PrepaidAmount),
      due: txt(t.PayableAmount)!,
      tax: txt(main.TaxAmount)!,
      taxInTaxCurrency: inTaxCurrency ? txt(inTaxCurrency.TaxAmount) : undefined,
    },
  };
}
