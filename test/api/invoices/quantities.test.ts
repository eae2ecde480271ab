import { describe, expect, it } from 'vitest';
import { XMLParser } from 'fast-xml-parser';
import { createTeam } from '../../helpers/factories';
import { createCustomer, createSentInvoice } from '../../helpers/invoiceFactory';
import { db } from '../../../shared/db';
import { loadDocumentInput } from '../../../shared/queries/invoices';
import { buildCiiXml } from '../../../shared/formats/cii/ciiInvoice';
import { buildEbInterfaceXml } from '../../../shared/formats/ebinterface/ebInterfaceInvoice';
import { renderInvoicePdf } from '../../../shared/formats/pdf/invoicePdf';
import { allText } from '../../formats/pdf/pdfTools';

/**
 * The invoice view carries quantities as JSON numbers (the spec's Item table). The document
 * writers read that view; they must still print every quantity exactly as stored (numeric in
 * PostgreSQL → view → writer), including the ones a float sum would get wrong (0.1, 0.2, 0.3).
 */
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', removeNSPrefix: true, parseTagValue: false });
const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);

describe('quantities from the database through the view into PDF, CII and ebInterface', () => {
  it('are printed exactly', async () => {
    const { tenant, member } = await createTeam();
    const customer = await createCustomer(tenant, { address: 'Ring 1\n1010 Wien', vatId: 'ATU12345678', company: 'Kunde GmbH' });
    const quantities = ['0.0001', '0.1', '0.2', '0.3', '12.3456', '33.3333', '7'];
    const inv = await createSentInvoice(tenant, member, {
      customerId: customer.id,
      items: quantities.map((q, i) => ({ description: `Position ${i + 1}`, quantity: q, unit: 'Stk', unitPrice: '12.34', taxRate: '20' })),
    });
    const input = await loadDocumentInput(db(), tenant.id, inv.id);
    expect(input.invoice.items.map((i) => i.quantity)).toEqual(quantities.map(Number));

    const cii = parser.parse(buildCiiXml(input)).CrossIndustryInvoice;
    const ciiLines = asArray(cii.SupplyChainTradeTransaction.IncludedSupplyChainTradeLineItem);
    expect(ciiLines.map((l: any) => l.SpecifiedLineTradeDelivery.BilledQuantity['#text'])).toEqual(quantities);

    const ebi = parser.parse(buildEbInterfaceXml(input)).Invoice;
    const ebiLines = asArray(ebi.Details.ItemList.ListLineItem);
    expect(ebiLines.map((l: any) => l.Quantity['#text'])).toEqual(quantities);

    const text = allText(await renderInvoicePdf(input));
    for (const [i, q] of ['0,0001', '0,1', '0,2', '0,3', '12,3456', '33,3333', '7'].entries()) {
      expect(text).toMatch(new RegExp(`^${i + 1} Position ${i + 1} ${q} Stk `, 'm'));
    }
  });
});
