/**
 * DocumentInput factory for the e-invoice writer tests (CII and ebInterface).
 *
 * The invoice domain module is written elsewhere, so the arithmetic lives here in a small local
 * helper following docs/decisions: line net = quantity x unit price rounded half-up to cents;
 * tax per rate group on the summed net, rounded half-up; totals are the sums.
 */
import Decimal from 'decimal.js';
import fc from 'fast-check';
import type { DocumentInput, InvoiceItemView, InvoiceView, PartyView, PaymentView, SellerView, TaxBreakdownView } from '../../../shared/domain/invoiceView';
import { stripInvalidXmlChars } from '../../../shared/formats/xml';
import { quantityNumber } from '../../../shared/domain/money';
import { type OfficialFile, officialPath } from '../../helpers/officialFiles';

/** The official XSDs and samples (under SCHEMAS_DIR, docs/official-files.md): each as the name a test declares it needs by, and its path. */
export const CII_XSD_FILE: OfficialFile = 'schemas:cii-d16b/facturx-en16931/Factur-X_EN16931.xsd';
export const CII_D16B_XSD_FILE: OfficialFile = 'schemas:cii-d16b/CrossIndustryInvoice_100pD16B.xsd';
export const CII_SAMPLES_FOLDER: OfficialFile = 'schemas:cii-d16b/samples';
export const EBI_XSD_FILE: OfficialFile = 'schemas:ebinterface-6.1/Invoice.xsd';
export const EBI_SAMPLES_FOLDER: OfficialFile = 'schemas:ebinterface-6.1/samples';
export const CII_XSD = officialPath(CII_XSD_FILE);
export const CII_D16B_XSD = officialPath(CII_D16B_XSD_FILE);
export const CII_SAMPLES = officialPath(CII_SAMPLES_FOLDER);
export const EBI_XSD = officialPath(EBI_XSD_FILE);
export const EBI_SAMPLES = officialPath(EBI_SAMPLES_FOLDER);

export interface ItemSpec {
  description: string;
  quantity: string;
  unitPrice: string;
  taxRate: string;
  unit?: string | null;
}

const money = (d: Decimal) => d.toDecimalPlaces(2, Decimal.ROUND_HALF_UP);

export function computeInvoiceAmounts(specs: ItemSpec[]): Pick<InvoiceView, 'items' | 'taxBreakdown' | 'totalNet' | 'totalTax' | 'totalGross'> {
  const items: InvoiceItemView[] = specs.map((s, i) => {
    const net = money(new Decimal(s.quantity).times(s.unitPrice));
    const tax = money(net.times(s.taxRate).dividedBy(100));
    return {
      position: i + 1,
      description: s.description,
      unit: s.unit ?? null,
      // The view carries quantities as JSON numbers, as the API returns them.
      quantity: quantityNumber(s.quantity),
      unitPrice: s.unitPrice,
      taxRate: s.taxRate,
      netAmount: net.toFixed(2),
      taxAmount: tax.toFixed(2),
      grossAmount: net.plus(tax).toFixed(2),
    };
  });
  const byRate = new Map<string, Decimal>();
  for (const it of items) {
    const key = new Decimal(it.taxRate).toString();
    byRate.set(key, (byRate.get(key) ?? new Decimal(0)).plus(it.netAmount));
  }
  const taxBreakdown: TaxBreakdownView[] = [...byRate.entries()]
    .sort(([a], [b]) => new Decimal(b).comparedTo(a))
    .map(([rate, net]) => ({ taxRate: rate, net: net.toFixed(2), tax: money(net.times(rate).dividedBy(100)).toFixed(2) }));
  const totalNet = taxBreakdown.reduce((a, g) => a.plus(g.net), new Decimal(0));
  const totalTax = taxBreakdown.reduce((a, g) => a.plus(g.tax), new Decimal(0));
  return {
    items,
    taxBreakdown,
    totalNet: totalNet.toFixed(2),
    totalTax: totalTax.toFixed(2),
    totalGross: totalNet.plus(totalTax).toFixed(2),
  };
}

export const sellerAT: SellerView = {
  name: 'Maria Huber',
  company: 'Huber Software GmbH',
  email: 'office@huber-software.at',
  phone: '+43 1 234 56 78',
  address: 'Mariahilfer Straße 12/3\n1060 Wien\nÖsterreich',
  vatId: 'ATU12345678',
  taxNumber: '12 345/6789',
  iban: 'AT61 1904 3002 3457 3201',
  bic: 'BKAUATWW',
  country: 'AT',
};

export const sellerDE: SellerView = {
  name: 'Lieferant GmbH',
  company: null,
  email: 'rechnung@lieferant.de',
  phone: null,
  address: 'Lieferantenstraße 20, 80333 München',
  vatId: 'DE123456789',
  taxNumber: '201/113/40209',
  iban: 'DE02120300000000202051',
  bic: 'BYLADEM1001',
  country: 'DE',
};

export type Customer = NonNullable<InvoiceView['customer']>;

export const customerAT: Customer = {
  id: '7d0c1c4e-8f0b-4a8e-9d7b-2a6f5f0f2a11',
  name: 'Franz Berger',
  company: 'Berger Bau GmbH',
  email: 'buchhaltung@berger-bau.at',
  phone: null,
  address: 'Hauptplatz 1, A-8010 Graz',
  vatId: 'ATU87654321',
  country: null,
};

export const customerDE: Customer = {
  id: '2b8e2f7a-0d55-4c2e-b4c8-0c1f6a1d9e22',
  name: 'Kunden AG Mitte',
  company: null,
  email: null,
  phone: null,
  address: 'Kundenstraße 15\n69876 Frankfurt',
  vatId: 'DE136695976',
  country: 'DE',
};

/** A private person in Austria: no VAT id. */
export const customerPrivate: Customer = {
  id: '5f3f0c1e-1111-4a4a-8b8b-123456789abc',
  name: 'Anna Gruber',
  company: null,
  email: 'anna@example.at',
  phone: null,
  address: 'Anna Gruber\nLinzer Gasse 5\n5020 Salzburg',
  vatId: null,
  country: null,
};

export interface InvoiceOverrides extends Partial<InvoiceView> {
  itemSpecs?: ItemSpec[];
  paid?: string;
}

export const defaultItems: ItemSpec[] = [{ description: 'Beratung', quantity: '2', unitPrice: '100.00', taxRate: '20', unit: 'Std' }];

export function makeDocument(seller: SellerView, customer: Customer | null, overrides: InvoiceOverrides = {}): DocumentInput {
  const { itemSpecs, paid, ...rest } = overrides;
  const amounts = computeInvoiceAmounts(itemSpecs ?? defaultItems);
  const amountPaid = new Decimal(paid ?? '0');
  const payments: PaymentView[] = amountPaid.isZero()
    ? []
    : [{ id: 'pay-1', amount: amountPaid.toFixed(2), date: '2026-03-20', method: 'bank_transfer', createdAt: '2026-03-20T10:00:00Z' }];
  const invoice: InvoiceView = {
    id: 'inv-1',
    type: 'rechnung',
    number: 'RE-2026-00001',
    status: amountPaid.isZero() ? 'offen' : 'teilbezahlt',
    customerId: customer?.id ?? null,
    customer: customer ? ({ ...customer } as PartyView & { id: string }) : null,
    notes: null,
    footerText: null,
    customFields: {},
    paymentTermDays: 14,
    detailsMarkdown: null,
    currency: 'EUR',
    issueDate: '2026-03-10',
    dueDate: '2026-03-24',
    serviceDate: '2026-03-05',
    serviceEndDate: null,
    ...amounts,
    amountPaid: amountPaid.toFixed(2),
    amountDue: new Decimal(amounts.totalGross).minus(amountPaid).toFixed(2),
    payments,
    relatedInvoiceId: null,
    relatedInvoiceNumber: null,
    sentAt: '2026-03-10T09:00:00Z',
    createdAt: '2026-03-09T09:00:00Z',
    updatedAt: '2026-03-10T09:00:00Z',
    ...rest,
  };
  return { invoice, seller };
}

/** Same document with every amount of the stored credit note negated (a reversal). */
export function negateAmounts(input: DocumentInput): DocumentInput {
  const n = (s: string) => {
    const d = new Decimal(s).negated();
    return (d.isZero() ? new Decimal(0) : d).toFixed(2);
  };
  const inv = input.invoice;
  return {
    seller: input.seller,
    invoice: {
      ...inv,
      items: inv.items.map((it) => ({
        ...it,
        quantity: -it.quantity,
        netAmount: n(it.netAmount),
        taxAmount: n(it.taxAmount),
        grossAmount: n(it.grossAmount),
      })),
      taxBreakdown: inv.taxBreakdown.map((g) => ({ ...g, net: n(g.net), tax: n(g.tax) })),
      totalNet: n(inv.totalNet),
      totalTax: n(inv.totalTax),
      totalGross: n(inv.totalGross),
      amountPaid: n(inv.amountPaid),
      amountDue: n(inv.amountDue),
    },
  };
}

export const mixedItemsAT: ItemSpec[] = [
  { description: 'Softwareentwicklung', quantity: '12.5', unitPrice: '95.00', taxRate: '20', unit: 'Std' },
  { description: 'Fachbuch "E-Rechnung in Österreich"', quantity: '3', unitPrice: '39.90', taxRate: '10', unit: 'Stk' },
  { description: 'Eintritt Konferenz', quantity: '1', unitPrice: '249.00', taxRate: '13', unit: 'pauschal' },
  { description: 'Fahrtkosten', quantity: '187.5', unitPrice: '0.42', taxRate: '20', unit: 'km' },
];

export const mixedItemsDE: ItemSpec[] = [
  { description: 'Trennblätter A4', quantity: '20', unitPrice: '9.90', taxRate: '19', unit: 'Stück' },
  { description: 'Joghurt Banane', quantity: '50', unitPrice: '5.50', taxRate: '7', unit: 'Stk' },
  { description: 'Versand', quantity: '2.75', unitPrice: '1.99', taxRate: '19', unit: 'kg' },
  { description: 'Montage vor Ort', quantity: '1.5', unitPrice: '480.00', taxRate: '19', unit: 'Tag' },
];

// --- fast-check generators ------------------------------------------------------------------------

export const AT_RATES = ['20', '10', '13', '0'] as const;

const descriptionArb = fc
  .oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
    fc.constantFrom('Beratung & Planung', '<tag> "quoted" \'single\'', 'Äpfel\nÖl\r\nÜbergröße', ']]> &amp; \u0001\u000C'),
  )
  .filter((s) => stripInvalidXmlChars(s).trim() !== '');

export const itemSpecArb: fc.Arbitrary<ItemSpec> = fc.record({
  description: descriptionArb,
  // up to 4 decimals, 0.0001 .. 9999.9999
  quantity: fc
    .tuple(fc.integer({ min: 1, max: 99_999_999 }), fc.integer({ min: 0, max: 4 }))
    .map(([n, scale]) => new Decimal(n).dividedBy(10 ** scale).toFixed()),
  // up to 2 decimals, 0.00 .. 99999.99
  unitPrice: fc.integer({ min: 0, max: 9_999_999 }).map((c) => new Decimal(c).dividedBy(100).toFixed(2)),
  taxRate: fc.constantFrom(...AT_RATES),
  unit: fc.constantFrom(null, 'Stk', 'Std', 'h', 'Tag', 'km', 'kg', 'pauschal', 'Kiste'),
});

/** Random AT-seller invoices and credit notes: mixed rates, customers with/without (foreign) VAT id, partial payments. */
export const documentArb: fc.Arbitrary<DocumentInput> = fc
  .record({
    items: fc.array(itemSpecArb, { minLength: 1, maxLength: 8 }),
    customer: fc.constantFrom(customerAT, customerDE, customerPrivate),
    creditNote: fc.boolean(),
    paidPercent: fc.integer({ min: 0, max: 100 }),
  })
  .map(({ items, customer, creditNote, paidPercent }) => {
    const gross = new Decimal(computeInvoiceAmounts(items).totalGross);
    const paid = creditNote ? '0' : gross.times(paidPercent).dividedBy(100).toDecimalPlaces(2, Decimal.ROUND_DOWN).toFixed(2);
    return makeDocument(sellerAT, customer, {
      itemSpecs: items,
      paid,
      ...(creditNote ? { type: 'gutschrift' as const, number: 'GS-2026-00099', relatedInvoiceNumber: 'RE-2026-00098' } : {}),
    });
  });
