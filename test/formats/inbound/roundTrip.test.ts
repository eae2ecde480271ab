/**
 * Our own outputs read back: the CII XML, the ZUGFeRD / Factur-X PDF and the ebInterface 6.1 XML
 * the service sends come back through the inbound reader with the same header, lines and totals,
 * and reconcile to the cent.
 */
import Decimal from 'decimal.js';
import { describe, expect, it } from 'vitest';
import type { DocumentInput } from '../../../shared/domain/invoiceView';
import { buildCiiXml } from '../../../shared/formats/cii/ciiInvoice';
import { buildEbInterfaceXml } from '../../../shared/formats/ebinterface/ebInterfaceInvoice';
import { type InboundResult, readEInvoice, reconcile } from '../../../shared/formats/inbound/readEInvoice';
import { renderZugferdPdf } from '../../../shared/formats/zugferd/facturx';
import { makeDocumentInput, manyItems } from '../pdf/fixtures';

const same = (a: string | null, b: string) => a !== null && new Decimal(a).eq(b);

function expectSameInvoice(r: InboundResult, input: DocumentInput) {
  if (!r.ok) throw new Error(r.reason);
  const inv = r.invoice;
  const view = input.invoice;
  expect(inv.number).toBe(view.number);
  expect(inv.issueDate).toBe(view.issueDate);
  expect(inv.currency).toBe(view.currency);
  expect(inv.kind).toBe('invoice');
  expect(inv.seller.name).toBe(input.seller.name);
  expect(inv.seller.vatId).toBe(input.seller.vatId);
  expect(inv.buyer.vatId).toBe(view.customer?.vatId ?? null);
  expect(inv.lines).toHaveLength(view.items.length);
  inv.lines.forEach((l, i) => {
    expect(same(l.netAmount, view.items[i].netAmount), `line ${i + 1} net`).toBe(true);
    expect(same(l.quantity, String(view.items[i].quantity)), `line ${i + 1} quantity`).toBe(true);
    expect(same(l.vatRate, view.items[i].taxRate), `line ${i + 1} rate`).toBe(true);
  });
  expect(same(inv.totals.net, view.totalNet)).toBe(true);
  expect(same(inv.totals.tax, view.totalTax)).toBe(true);
  expect(same(inv.totals.gross, view.totalGross)).toBe(true);
  expect(same(inv.totals.due, view.amountDue)).toBe(true);
  expect(reconcile(inv)).toEqual({ matches: true, differences: [] });
}

const inputs: Array<[string, DocumentInput]> = [
  ['default (AT → DE, 20 % and 10 %)', makeDocumentInput()],
  ['partly paid', makeDocumentInput({ payments: [{ amount: '500.00', date: '2026-03-15', method: 'ueberweisung' }] })],
  ['40 lines', makeDocumentInput({ items: manyItems(40) })],
];

describe('inbound round trip of our own e-invoices', () => {
  it.each(inputs)('CII: %s', async (_name, input) => {
    const r = await readEInvoice(Buffer.from(buildCiiXml(input), 'utf8'), 'application/xml');
    expect(r.ok && [r.format, r.syntax, r.warnings]).toEqual(['cii', 'CII', []]);
    expectSameInvoice(r, input);
  });

  it.each(inputs)('ZUGFeRD PDF: %s', async (_name, input) => {
    const pdf = await renderZugferdPdf(input, buildCiiXml(input));
    const r = await readEInvoice(pdf, 'application/pdf');
    expect(r.ok && [r.format, r.syntax, r.warnings]).toEqual(['facturx-pdf', 'CII', []]);
    expectSameInvoice(r, input);
  });

  it.each(inputs)('ebInterface 6.1: %s', async (_name, input) => {
    const r = await readEInvoice(Buffer.from(buildEbInterfaceXml(input), 'utf8'), 'application/xml');
    expect(r.ok && [r.format, r.syntax]).toEqual(['ebinterface', 'ebInterface']);
    expectSameInvoice(r, input);
  });

  it('a credit note (gutschrift) reads back as a credit note in CII, the PDF and ebInterface', async () => {
    const input = makeDocumentInput({ invoice: { type: 'gutschrift', relatedInvoiceNumber: 'RE-2026-00041' } });
    const xml = buildCiiXml(input);
    for (const r of [
      await readEInvoice(Buffer.from(xml, 'utf8'), 'application/xml'),
      await readEInvoice(await renderZugferdPdf(input, xml), 'application/pdf'),
      await readEInvoice(Buffer.from(buildEbInterfaceXml(input), 'utf8'), 'application/xml'),
    ]) {
      if (!r.ok) throw new Error(r.reason);
      expect(r.invoice.kind).toBe('creditNote');
      expect(r.invoice.precedingInvoiceNumber).toBe(input.invoice.relatedInvoiceNumber);
      expect(same(r.invoice.totals.gross, input.invoice.totalGross)).toBe(true);
      expect(reconcile(r.invoice).matches).toBe(true);
    }
  });

  it('a changed total is a difference reconcile names', async () => {
    const input = makeDocumentInput();
    const r = await readEInvoice(Buffer.from(buildCiiXml(input), 'utf8'), 'application/xml');
    if (!r.ok) throw new Error(r.reason);
    const tampered = { ...r.invoice, totals: { ...r.invoice.totals, tax: new Decimal(r.invoice.totals.tax ?? 0).plus('0.01').toFixed(2) } };
    const { matches, differences } = reconcile(tampered);
    expect(matches).toBe(false);
    expect(differences).toEqual([
      { rule: 'BR-CO-14', term: 'BT-110', stated: tampered.totals.tax, computed: r.invoice.totals.tax },
      // BT-112 then no longer equals BT-109 + BT-110 as stated.
      { rule: 'BR-CO-15', term: 'BT-112', stated: r.invoice.totals.gross, computed: new Decimal(r.invoice.totals.gross ?? 0).plus('0.01').toFixed(2) },
    ]);
  });

  it('a line amount that does not add up to BT-106 is a difference', async () => {
    const r = await readEInvoice(Buffer.from(buildCiiXml(makeDocumentInput()), 'utf8'), 'application/xml');
    if (!r.ok) throw new Error(r.reason);
    const lines = r.invoice.lines.map((l, i) => (i === 0 ? { ...l, netAmount: new Decimal(l.netAmount).minus(1).toFixed(2) } : l));
    const { differences } = reconcile({ ...r.invoice, lines });
    expect(differences.map((d) => d.rule)).toEqual(['BR-CO-10', 'BR-CO-18/BR-S-08']);
  });
});
