import { expect } from 'vitest';
import { dec, fmtMoney, roundMoney } from '../../shared/domain/money';
import type { TestClient } from './http';
import { waitUntil } from './waitUntil';

/** The statuses an import ends in (docs/e-invoicing-inbound.md, "The import job"). */
const FINAL = ['imported', 'duplicate', 'rejected'];

/**
 * Waits until the import job has settled an upload and returns its row. The first import of a
 * test file starts the sandboxed documents worker's child process, which on a loaded CI host
 * takes a while: hence the long default.
 */
export function settledImport(http: TestClient, token: string, id: string, what = `the import of ${id}`, timeoutMs = 110_000) {
  return waitUntil(
    async () => {
      const res = await http.get(`/api/incoming-einvoices/${id}`, { token });
      return FINAL.includes(res.body.status) ? res.body : null;
    },
    what,
    timeoutMs,
  );
}

/** Uploads a file as the body (202 expected) and waits for its import to settle. */
export async function uploadAndSettle(
  http: TestClient,
  team: { member: { token: string }; viewer: { token: string } },
  bytes: Buffer,
  contentType = 'application/xml',
  what?: string,
) {
  const res = await http.request('POST', '/api/incoming-einvoices', { token: team.member.token, rawBody: bytes, headers: { 'content-type': contentType } });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return settledImport(http, team.viewer.token, res.body.id, what);
}

export interface UblLine {
  net: string;
  rate: string;
}
export interface UblDoc {
  kind?: 'Invoice' | 'CreditNote';
  number: string;
  date?: string;
  currency?: string;
  seller?: { name: string; vatId: string | null; country: string };
  lines: UblLine[];
  /** BT-117 per rate as the document states it; computed when absent. */
  statedTax?: Record<string, string>;
  preceding?: string;
}

const DE_SELLER = { name: 'Muster Lieferant GmbH', vatId: 'DE136695976', country: 'DE' };

/** A small EN 16931 UBL document whose totals add up (BR-CO-10…16) with the tax it states. */
export function ublDocument(d: UblDoc): Buffer {
  const kind = d.kind ?? 'Invoice';
  const cur = d.currency ?? 'EUR';
  const seller = d.seller ?? DE_SELLER;
  const rates = [...new Set(d.lines.map((l) => l.rate))];
  const basis = (r: string) => d.lines.filter((l) => l.rate === r).reduce((a, l) => a.plus(dec(l.net)), dec(0));
  const taxOf = (r: string) => dec(d.statedTax?.[r] ?? fmtMoney(roundMoney(basis(r).times(dec(r)).dividedBy(100))));
  const net = d.lines.reduce((a, l) => a.plus(dec(l.net)), dec(0));
  const tax = rates.reduce((a, r) => a.plus(taxOf(r)), dec(0));
  const m = (v: ReturnType<typeof dec>) => `currencyID="${cur}">${fmtMoney(v)}`;
  const line = kind === 'Invoice' ? 'InvoiceLine' : 'CreditNoteLine';
  const qty = kind === 'Invoice' ? 'InvoicedQuantity' : 'CreditedQuantity';
  return Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<${kind} xmlns="urn:oasis:names:specification:ubl:schema:xsd:${kind}-2"
  xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
  xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:CustomizationID>urn:cen.eu:en16931:2017</cbc:CustomizationID>
  <cbc:ID>${d.number}</cbc:ID>
  <cbc:IssueDate>${d.date ?? '2026-03-10'}</cbc:IssueDate>
  <cbc:${kind}TypeCode>${kind === 'Invoice' ? 380 : 381}</cbc:${kind}TypeCode>
  <cbc:DocumentCurrencyCode>${cur}</cbc:DocumentCurrencyCode>
  ${d.preceding ? `<cac:BillingReference><cac:InvoiceDocumentReference><cbc:ID>${d.preceding}</cbc:ID></cac:InvoiceDocumentReference></cac:BillingReference>` : ''}
  <cac:AccountingSupplierParty><cac:Party>
    <cac:PostalAddress><cbc:CityName>Stadt</cbc:CityName><cac:Country><cbc:IdentificationCode>${seller.country}</cbc:IdentificationCode></cac:Country></cac:PostalAddress>
    ${seller.vatId ? `<cac:PartyTaxScheme><cbc:CompanyID>${seller.vatId}</cbc:CompanyID><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme>` : ''}
    <cac:PartyLegalEntity><cbc:RegistrationName>${seller.name}</cbc:RegistrationName></cac:PartyLegalEntity>
  </cac:Party></cac:AccountingSupplierParty>
  <cac:AccountingCustomerParty><cac:Party><cac:PartyLegalEntity><cbc:RegistrationName>Käufer</cbc:RegistrationName></cac:PartyLegalEntity></cac:Party></cac:AccountingCustomerParty>
  <cac:TaxTotal><cbc:TaxAmount ${m(tax)}</cbc:TaxAmount>
    ${rates
      .map(
        (r) => `<cac:TaxSubtotal><cbc:TaxableAmount ${m(basis(r))}</cbc:TaxableAmount><cbc:TaxAmount ${m(taxOf(r))}</cbc:TaxAmount>
      <cac:TaxCategory><cbc:ID>S</cbc:ID><cbc:Percent>${r}</cbc:Percent><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:TaxCategory></cac:TaxSubtotal>`,
      )
      .join('\n    ')}
  </cac:TaxTotal>
  <cac:LegalMonetaryTotal>
    <cbc:LineExtensionAmount ${m(net)}</cbc:LineExtensionAmount><cbc:TaxExclusiveAmount ${m(net)}</cbc:TaxExclusiveAmount>
    <cbc:TaxInclusiveAmount ${m(net.plus(tax))}</cbc:TaxInclusiveAmount><cbc:PayableAmount ${m(net.plus(tax))}</cbc:PayableAmount>
  </cac:LegalMonetaryTotal>
  ${d.lines
    .map(
      (
        l,
        i,
      ) => `<cac:${line}><cbc:ID>${i + 1}</cbc:ID><cbc:${qty} unitCode="C62">1</cbc:${qty}><cbc:LineExtensionAmount ${m(dec(l.net))}</cbc:LineExtensionAmount>
    <cac:Item><cbc:Name>Position ${i + 1}</cbc:Name><cac:ClassifiedTaxCategory><cbc:ID>S</cbc:ID><cbc:Percent>${l.rate}</cbc:Percent><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:ClassifiedTaxCategory></cac:Item>
    <cac:Price><cbc:PriceAmount currencyID="${cur}">${l.net}</cbc:PriceAmount></cac:Price></cac:${line}>`,
    )
    .join('\n  ')}
</${kind}>`);
}
