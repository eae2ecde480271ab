/**
 * DocumentInput factory for format tests (PDF, ZUGFeRD, and anyone else rendering invoices).
 * Totals are computed the way the domain does (decimal.js, half-up per line net, tax per rate
 * group on the summed net), so every fixture reconciles like a real invoice.
 *
 *   makeDocumentInput()                                   // offen Rechnung AT → DE, 3 items
 *   makeDocumentInput({ invoice: { status: 'entwurf', number: null } })
 *   makeDocumentInput({ items: manyItems(200) })
 */
import Decimal from 'decimal.js';
import type { DocumentInput, InvoiceItemView, InvoiceView, PartyView, PaymentView, SellerView, TaxBreakdownView } from '../../../shared/domain/invoiceView';
import { quantityNumber } from '../../../shared/domain/money';

export interface ItemSpec {
  description: string;
  quantity: string;
  unitPrice: string;
  taxRate: string;
  unit?: string | null;
}

const money = (d: Decimal) => d.toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toFixed(2);

export function makeSeller(overrides: Partial<SellerView> = {}): SellerView {
  return {
    name: 'Müller & Söhne Software GmbH',
    company: null,
    email: 'buchhaltung@mueller-soehne.at',
    phone: '+43 1 234 56 78',
    address: 'Mariahilfer Straße 1\n1060 Wien',
    vatId: 'ATU12345678',
    taxNumber: '12 345/6789',
    iban: 'AT611904300234573201',
    bic: 'BKAUATWW',
    country: 'AT',
    ...overrides,
  };
}

export function makeCustomer(overrides: Partial<PartyView> = {}): PartyView & { id: string } {
  return {
    id: '7f0c8a52-5d8e-4c1e-9a51-2f5f0b6c1d11',
    name: 'Erika Mustermann',
    company: 'Beispiel Handels GmbH',
    email: 'erika@beispiel.de',
    phone: null,
    address: 'Hauptstraße 5, 10115 Berlin',
    vatId: 'DE123456789',
    country: 'DE',
    ...overrides,
  };
}

export const DEFAULT_ITEMS: ItemSpec[] = [
  { description: 'Beratung Buchhaltung und Jahresabschluss', quantity: '10.5', unit: 'Std', unitPrice: '120.00', taxRate: '20' },
  { description: 'Software-Lizenz (jährlich)', quantity: '1', unit: 'Stk', unitPrice: '990.00', taxRate: '20' },
  { description: 'Fachbuch Umsatzsteuer', quantity: '2', unit: 'Stk', unitPrice: '44.50', taxRate: '10' },
];

/** n generated items, "Position 1" … "Position n", alternating 20 % and 10 %. */
export function manyItems(n: number): ItemSpec[] {
  return Array.from({ length: n }, (_, i) => ({
    description: `Position ${i + 1}: Wartungsleistung Modul ${String.fromCharCode(65 + (i % 26))}`,
    quantity: String((i % 5) + 1),
    unit: 'Std',
    unitPrice: `${(i % 7) * 10 + 15}.25`,
    taxRate: i % 2 === 0 ? '20' : '10',
  }));
}

export function buildItems(specs: ItemSpec[]): {
  items: InvoiceItemView[];
  taxBreakdown: TaxBreakdownView[];
  totalNet: string;
  totalTax: string;
  totalGross: string;
} {
  const items = specs.map((s, i) => {
    const net = new Decimal(s.quantity).times(s.unitPrice).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
    const tax = net.times(s.taxRate).div(100).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
    return {
      position: i + 1,
      description: s.description,
      unit: s.unit ?? null,
      // The view carries quantities as JSON numbers, as the API returns them.
      quantity: quantityNumber(s.quantity),
      unitPrice: s.unitPrice,
      taxRate: s.taxRate,
      netAmount: money(net),
      taxAmount: money(tax),
      grossAmount: money(net.plus(tax)),
    };
  });
  const groups = new Map<string, Decimal>();
  for (const it of items) groups.set(it.taxRate, (groups.get(it.taxRate) ?? new Decimal(0)).plus(it.netAmount));
  const taxBreakdown = [...groups.entries()].map(([taxRate, net]) => ({
    taxRate,
    net: money(net),
    tax: money(net.times(taxRate).div(100)),
  }));
  const totalNet = taxBreakdown.reduce((s, g) => s.plus(g.net), new Decimal(0));
  const totalTax = taxBreakdown.reduce((s, g) => s.plus(g.tax), new Decimal(0));
  return { items, taxBreakdown, totalNet: money(totalNet), totalTax: money(totalTax), totalGross: money(totalNet.plus(totalTax)) };
}

export interface DocumentOverrides {
  invoice?: Partial<InvoiceView>;
  seller?: Partial<SellerView>;
  customer?: Partial<PartyView> | null;
  items?: ItemSpec[];
  /** Payments; amountPaid/amountDue follow from them unless given in `invoice`. */
  payments?: Array<Pick<PaymentView, 'amount' | 'date' | 'method'>>;
}

export function makeDocumentInput(overrides: DocumentOverrides = {}): DocumentInput {
  const totals = buildItems(overrides.items ?? DEFAULT_ITEMS);
  const payments: PaymentView[] = (overrides.payments ?? []).map((p, i) => ({
    id: `00000000-0000-4000-8000-00000000000${i + 1}`,
    createdAt: `${p.date}T09:00:00.000Z`,
    ...p,
  }));
  const paid = payments.reduce((s, p) => s.plus(p.amount), new Decimal(0));
  const customer = overrides.customer === null ? null : makeCustomer(overrides.customer ?? {});
  const invoice: InvoiceView = {
    id: '3d6f4c1a-8b9e-4f2a-b1c3-0e5d7a9f1234',
    type: 'rechnung',
    number: 'RE-2026-00042',
    status: payments.length ? (new Decimal(totals.totalGross).lte(paid) ? 'bezahlt' : 'teilbezahlt') : 'offen',
    customerId: customer?.id ?? null,
    customer,
    items: totals.items,
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
    totalNet: totals.totalNet,
    totalTax: totals.totalTax,
    totalGross: totals.totalGross,
    taxBreakdown: totals.taxBreakdown,
    amountPaid: money(paid),
    amountDue: money(new Decimal(totals.totalGross).minus(paid)),
    payments,
    relatedInvoiceId: null,
    relatedInvoiceNumber: null,
    sentAt: '2026-03-10T08:15:00.000Z',
    createdAt: '2026-03-09T16:00:00.000Z',
    updatedAt: '2026-03-10T08:15:00.000Z',
    ...overrides.invoice,
  };
  return { invoice, seller: makeSeller(overrides.seller) };
}
