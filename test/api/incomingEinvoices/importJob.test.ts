/**
 * The import job's guarantees, calling its handler in-process (docs/e-invoicing-inbound.md,
 * "The import job"): never two invoices for one upload, a refused booking leaves nothing behind,
 * and the mapping of credit notes, allowances and lines that do not keep their quantity.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Job } from 'bullmq';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../../shared/db';
import { systemActor } from '../../../shared/actor';
import type { ImportIncomingEinvoicePayload } from '../../../shared/jobs/catalog';
import { receiveIncomingEinvoice } from '../../../shared/commands/incomingEinvoices/receive';
import { toInvoiceInput } from '../../../shared/commands/incomingEinvoices/toInvoiceInput';
import type { InboundInvoice } from '../../../shared/formats/inbound/types';
import { importIncomingEinvoiceJob } from '../../../workers/jobs/einvoices/importIncomingEinvoice';
import { createTenant } from '../../helpers/factories';
import { createSupplier } from '../../helpers/invoiceFactory';
import { needsOfficialFiles, officialPath } from '../../helpers/officialFiles';

const MANIFEST = 'samples:einvoices/manifest.json' as const;
const official = needsOfficialFiles([MANIFEST]);
const sampleBytes = (file: string) => readFileSync(path.join(path.dirname(officialPath(MANIFEST)), file));

async function receive(tenantId: string, bytes: Buffer, supplierIdHint: string | null = null) {
  // The outbox row is written too; no worker runs here, the handler is called directly.
  return db().transaction((trx) => receiveIncomingEinvoice({ trx, actor: systemActor(tenantId) }, { bytes, mediaType: 'application/xml', supplierIdHint }));
}
const runJob = (tenantId: string, incomingId: string) =>
  importIncomingEinvoiceJob({ data: { tenantId, incomingId } } as Job<ImportIncomingEinvoicePayload>) as Promise<{ status: string }>;

describe.skipIf(!official)('the job with an official sample', () => {
  let tenantId: string;
  beforeAll(async () => {
    tenantId = (await createTenant({ country: 'DE', vatId: 'DE811907980' })).id;
  });

  it('a second run, and a run after a crash mid-import, book the invoice once', async () => {
    const { id } = await receive(tenantId, sampleBytes('xrechnung-testsuite/01.01a-INVOICE_ubl.xml'));
    // A crashed attempt leaves the row processing: the retry continues from there.
    await db()('incomingEinvoices').where({ id }).update({ status: 'processing' });
    expect((await runJob(tenantId, id)).status).toBe('imported');
    expect(await runJob(tenantId, id)).toMatchObject({ status: 'imported', skipped: true });
    const invoices = await db()('invoices').where({ tenantId, type: 'eingangsrechnung' });
    expect(invoices).toHaveLength(1);
    expect(invoices[0].source).toBe('einvoice');
  });

  it('the supplier named by ?supplierId is used before matching by VAT ID', async () => {
    const hinted = await createSupplier({ id: tenantId }, { name: 'Chosen by the uploader' });
    const { id } = await receive(tenantId, sampleBytes('xrechnung-testsuite/04.05a-INVOICE_uncefact.xml'), hinted.id);
    expect((await runJob(tenantId, id)).status).toBe('imported');
    const row = await db()('incomingEinvoices').where({ id }).first();
    expect((await db()('invoices').where({ id: row.invoiceId }).first()).supplierId).toBe(hinted.id);
  });

  it('a stated VAT 1.00 off the computed one (BR-CO-17) rejects and rolls back the new supplier', async () => {
    const other = (await createTenant({ country: 'DE' })).id;
    // 01.06 states 757.41 on 3986.34 at 19 % (757.40): 1.00 more, with the totals moved along so it reconciles.
    const bytes = Buffer.from(
      sampleBytes('xrechnung-testsuite/01.06_minimal_test_uncefact.xml').toString('utf8').replaceAll('757.41', '758.40').replaceAll('4743.75', '4744.74'),
    );
    const { id } = await receive(other, bytes);
    expect((await runJob(other, id)).status).toBe('rejected');
    const row = await db()('incomingEinvoices').where({ id }).first();
    expect(row.status).toBe('rejected');
    expect(row.errors).toEqual([
      { rule: 'BR-CO-17', message: expect.stringMatching(/states VAT 758\.40 at 19 %, its lines give 757\.40: a difference of 1\.00/) },
    ]);
    expect(await db()('suppliers').where({ tenantId: other })).toHaveLength(0);
    expect(await db()('invoices').where({ tenantId: other })).toHaveLength(0);
  });
});

const base: InboundInvoice = {
  kind: 'invoice',
  number: 'R-1',
  issueDate: '2026-01-10',
  dueDate: '2026-01-24',
  currency: 'EUR',
  buyerReference: null,
  orderReference: null,
  precedingInvoiceNumber: null,
  seller: { name: 'S', vatId: null, taxNumber: null, address: { lines: [], city: null, postcode: null, country: 'DE' }, iban: null, email: null },
  buyer: { name: null, vatId: null },
  lines: [
    { quantity: '2', unitCode: 'HUR', name: 'Beratung', netPrice: '50.00', netAmount: '100.00', vatCategory: 'S', vatRate: '19' },
    // Price per base quantity of 100: quantity and price do not reproduce the amount.
    { quantity: '3', unitCode: 'C62', name: 'Schrauben', netPrice: '12.3456', netAmount: '0.37', vatCategory: 'S', vatRate: '19' },
    { quantity: '1', unitCode: null, name: null, netPrice: '10', netAmount: '10.00', vatCategory: 'AE', vatRate: '0' },
  ],
  allowances: [{ amount: '5.00', vatCategory: 'S', vatRate: '19', reason: 'Rabatt' }],
  charges: [{ amount: '2.50', vatCategory: 'S', vatRate: '19', reason: null }],
  vatBreakdown: [],
  totals: {
    lineNet: null,
    allowances: null,
    charges: null,
    net: null,
    tax: null,
    gross: null,
    prepaid: null,
    rounding: null,
    due: null,
    thirdPartyPayments: null,
  },
};

describe('toInvoiceInput', () => {
  it('maps lines, categories, allowances and charges, and the payment term', () => {
    const { input, negate } = toInvoiceInput(base, 'sup', 'DE');
    expect(negate).toBe(false);
    expect(input).toMatchObject({
      type: 'eingangsrechnung',
      supplierId: 'sup',
      invoiceNumber: 'R-1',
      invoiceDate: '2026-01-10',
      currency: 'EUR',
      paymentTermDays: 14,
    });
    expect(input.items).toEqual([
      expect.objectContaining({ description: 'Beratung', quantity: '2', unit: 'HUR', unitPrice: '50.00', taxRate: '19', taxCategory: 'standard' }),
      expect.objectContaining({ description: 'Schrauben (3 C62 × 12.3456)', quantity: '1', unit: null, unitPrice: '0.37', taxCategory: 'standard' }),
      expect.objectContaining({ description: 'Position 3', unitPrice: '10.00', taxRate: '0', taxCategory: 'reverseCharge' }),
      expect.objectContaining({ description: 'Rabatt', unitPrice: '-5.00', taxCategory: 'standard' }),
      expect.objectContaining({ description: 'Zuschlag', unitPrice: '2.50' }),
    ]);
  });

  it('books a credit note negative and names the invoice it corrects', () => {
    const { input, negate } = toInvoiceInput({ ...base, kind: 'creditNote', precedingInvoiceNumber: 'R-0' }, 'sup', 'DE');
    expect(negate).toBe(true);
    expect(input.items!.map((i) => i.unitPrice)).toEqual(['-50.00', '-0.37', '-10.00', '5.00', '-2.50']);
    expect(input.notes).toBe('Gutschrift zu Rechnung R-0');
  });

  it('refuses a category this service has no equivalent for, and books a document without lines by its VAT breakdown', () => {
    expect(() => toInvoiceInput({ ...base, lines: [{ ...base.lines[0], vatCategory: 'L' }] }, 'sup', 'DE')).toThrow(/VAT category L/);
    const { input } = toInvoiceInput(
      {
        ...base,
        lines: [],
        allowances: [],
        charges: [],
        vatBreakdown: [{ category: 'S', rate: '19', basis: '100.00', tax: '19.00', exemptionReason: null, exemptionCode: null }],
      },
      'sup',
      'DE',
    );
    expect(input.items).toEqual([expect.objectContaining({ quantity: '1', unitPrice: '100.00', taxRate: '19', taxCategory: 'standard' })]);
  });
});
