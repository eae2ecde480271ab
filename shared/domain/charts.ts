import type { ProviderSlug } from './paymentProviders';

/**
 * Charts of accounts seeded per tenant country (docs/ledger.md): Austria (and, as the service's
 * home default, every other country) gets the Österreichischer Einheitskontenrahmen (EKR), Germany
 * the DATEV SKR03. Only the accounts the automatic postings and their usual manual alternatives
 * need are seeded; a tenant's accountant may add more. Pure data: no I/O.
 */
export type AccountKind = 'asset' | 'liability' | 'equity' | 'revenue' | 'expense';
export type ChartName = 'EKR' | 'SKR03';

export interface ChartAccount {
  number: string;
  name: string;
  kind: AccountKind;
}

export interface Chart {
  name: ChartName;
  accounts: readonly ChartAccount[];
  /** Debited by an incoming invoice when neither settings, the supplier nor its history say otherwise. */
  defaultExpense: string;
  /** Credited per provider: where the provider's money sits until it reaches the bank. */
  clearing: Readonly<Record<ProviderSlug, string>>;
  bank: string;
  /** Trade receivables: a bank payment of a sales invoice clears them (docs/bank-statements.md). */
  receivables: string;
  /** The country's standard VAT rate: the tax a reverse-charge purchase or an ig. Erwerb owes. */
  standardRate: string;
  /**
   * Purchases the buyer owes the VAT on (docs/ledger.md, "Reverse charge"): the output VAT owed
   * and the input VAT deducted, each on its own account so the return's lines can be read off.
   */
  purchaseTax: Readonly<Record<'reverseCharge' | 'intraCommunityAcquisition', { inputTax: string; outputTax: string }>>;
  /** Credited by an imported e-invoice: it arrives unpaid (Verbindlichkeiten aus Lieferungen und Leistungen). */
  payables: string;
  /** Deductible input tax of an imported e-invoice, by rate; `other` for a rate without an account of its own. */
  inputTax: Readonly<{ byRate: Readonly<Record<string, string>>; other: string }>;
}

const EKR: Chart = {
  name: 'EKR',
  defaultExpense: '7890',
  bank: '2800',
  receivables: '2000',
  // Stripe, PayPal and Mollie hold the money before paying out: a transit (clearing) account each,
  // so the payout to the bank clears it. A bank connector books straight against the bank.
  clearing: { stripe: '2891', paypal: '2892', mollie: '2893', bank: '2800' },
  standardRate: '20',
  // EKR fixes the classes (25 Vorsteuer, 35 Umsatzsteuer), not these numbers: our choice, to be confirmed with the advisor.
  purchaseTax: {
    reverseCharge: { inputTax: '2506', outputTax: '3506' },
    intraCommunityAcquisition: { inputTax: '2505', outputTax: '3505' },
  },
  payables: '3300',
  // The EKR keeps one Vorsteuer account for every rate (the U30 reads the rates off the invoices).
  inputTax: { byRate: {}, other: '2500' },
  accounts: [
    { number: '0600', name: 'Betriebs- und Geschäftsausstattung', kind: 'asset' },
    { number: '2000', name: 'Lieferforderungen', kind: 'asset' },
    { number: '2500', name: 'Vorsteuer', kind: 'asset' },
    { number: '2505', name: 'Vorsteuer aus innergemeinschaftlichem Erwerb', kind: 'asset' },
    { number: '2506', name: 'Vorsteuer Reverse Charge (§ 19 Abs. 1 UStG)', kind: 'asset' },
    { number: '2700', name: 'Kassa', kind: 'asset' },
    { number: '2800', name: 'Bank', kind: 'asset' },
    { number: '2890', name: 'Geldtransit', kind: 'asset' },
    { number: '2891', name: 'Verrechnungskonto Stripe', kind: 'asset' },
    { number: '2892', name: 'Verrechnungskonto PayPal', kind: 'asset' },
    { number: '2893', name: 'Verrechnungskonto Mollie', kind: 'asset' },
    { number: '3300', name: 'Lieferverbindlichkeiten', kind: 'liability' },
    { number: '3500', name: 'Umsatzsteuer', kind: 'liability' },
    { number: '3505', name: 'Erwerbsteuer (innergemeinschaftlicher Erwerb)', kind: 'liability' },
    { number: '3506', name: 'Umsatzsteuer Reverse Charge (§ 19 Abs. 1 UStG)', kind: 'liability' },
    { number: '4000', name: 'Umsatzerlöse 20 %', kind: 'revenue' },
    { number: '4010', name: 'Umsatzerlöse 10 %', kind: 'revenue' },
    { number: '4013', name: 'Umsatzerlöse 13 %', kind: 'revenue' },
    // The 0 % turnover per VAT category, as the DATEV export books it (docs/tax-reports.md).
    { number: '4100', name: 'Umsatzerlöse innergemeinschaftliche Lieferungen', kind: 'revenue' },
    { number: '4110', name: 'Umsatzerlöse Ausfuhrlieferungen', kind: 'revenue' },
    { number: '4120', name: 'Umsatzerlöse sonstige Leistungen EU (Reverse Charge)', kind: 'revenue' },
    { number: '4130', name: 'Umsatzerlöse nicht steuerbar (Leistungsort Ausland)', kind: 'revenue' },
    { number: '4190', name: 'Umsatzerlöse steuerfrei', kind: 'revenue' },
    { number: '5000', name: 'Wareneinsatz', kind: 'expense' },
    { number: '5800', name: 'Fremdleistungen', kind: 'expense' },
    { number: '7200', name: 'Instandhaltung', kind: 'expense' },
    { number: '7380', name: 'Nachrichtenaufwand (Telefon, Internet)', kind: 'expense' },
    { number: '7400', name: 'Miet- und Leasingaufwand', kind: 'expense' },
    { number: '7600', name: 'Büromaterial', kind: 'expense' },
    { number: '7650', name: 'Werbeaufwand', kind: 'expense' },
    { number: '7690', name: 'Spesen des Geldverkehrs', kind: 'expense' },
    { number: '7750', name: 'Rechts- und Beratungsaufwand', kind: 'expense' },
    { number: '7780', name: 'Mitgliedsbeiträge', kind: 'expense' },
    { number: '7890', name: 'Übriger betrieblicher Aufwand', kind: 'expense' },
    { number: '9000', name: 'Eigenkapital', kind: 'equity' },
  ],
};

const SKR03: Chart = {
  name: 'SKR03',
  defaultExpense: '4900',
  bank: '1200',
  receivables: '1400',
  clearing: { stripe: '1361', paypal: '1362', mollie: '1363', bank: '1200' },
  standardRate: '19',
  purchaseTax: {
    reverseCharge: { inputTax: '1577', outputTax: '1787' },
    intraCommunityAcquisition: { inputTax: '1574', outputTax: '1774' },
  },
  payables: '1600',
  inputTax: { byRate: { '19': '1576', '7': '1571' }, other: '1570' },
  accounts: [
    { number: '0420', name: 'Technische Anlagen und Maschinen', kind: 'asset' },
    { number: '0800', name: 'Gezeichnetes Kapital', kind: 'equity' },
    { number: '1000', name: 'Kasse', kind: 'asset' },
    { number: '1200', name: 'Bank', kind: 'asset' },
    { number: '1360', name: 'Geldtransit', kind: 'asset' },
    { number: '1361', name: 'Verrechnungskonto Stripe', kind: 'asset' },
    { number: '1362', name: 'Verrechnungskonto PayPal', kind: 'asset' },
    { number: '1363', name: 'Verrechnungskonto Mollie', kind: 'asset' },
    { number: '1400', name: 'Forderungen aus Lieferungen und Leistungen', kind: 'asset' },
    { number: '1570', name: 'Abziehbare Vorsteuer', kind: 'asset' },
    { number: '1571', name: 'Abziehbare Vorsteuer 7 %', kind: 'asset' },
    { number: '1574', name: 'Abziehbare Vorsteuer aus innergemeinschaftlichem Erwerb 19 %', kind: 'asset' },
    { number: '1576', name: 'Abziehbare Vorsteuer 19 %', kind: 'asset' },
    { number: '1577', name: 'Abziehbare Vorsteuer nach § 13b UStG 19 %', kind: 'asset' },
    { number: '1600', name: 'Verbindlichkeiten aus Lieferungen und Leistungen', kind: 'liability' },
    { number: '1774', name: 'Umsatzsteuer aus innergemeinschaftlichem Erwerb 19 %', kind: 'liability' },
    { number: '1776', name: 'Umsatzsteuer 19 %', kind: 'liability' },
    { number: '1787', name: 'Umsatzsteuer nach § 13b UStG 19 %', kind: 'liability' },
    { number: '3100', name: 'Fremdleistungen', kind: 'expense' },
    { number: '3400', name: 'Wareneingang 19 % Vorsteuer', kind: 'expense' },
    { number: '4210', name: 'Miete', kind: 'expense' },
    { number: '4600', name: 'Werbekosten', kind: 'expense' },
    { number: '4806', name: 'Wartungskosten für Hard- und Software', kind: 'expense' },
    { number: '4900', name: 'Sonstige betriebliche Aufwendungen', kind: 'expense' },
    { number: '4920', name: 'Telefon', kind: 'expense' },
    { number: '4930', name: 'Bürobedarf', kind: 'expense' },
    { number: '4950', name: 'Rechts- und Beratungskosten', kind: 'expense' },
    { number: '4970', name: 'Nebenkosten des Geldverkehrs', kind: 'expense' },
    { number: '8400', name: 'Erlöse 19 % USt', kind: 'revenue' },
    { number: '8300', name: 'Erlöse 7 % USt', kind: 'revenue' },
    // The 0 % turnover per VAT category, as the DATEV export books it (docs/tax-reports.md).
    { number: '8100', name: 'Steuerfreie Umsätze § 4 Nr. 8 ff. UStG', kind: 'revenue' },
    { number: '8105', name: 'Steuerfreie Umsätze nach § 4 Nr. 12 UStG (Vermietung und Verpachtung)', kind: 'revenue' },
    { number: '8120', name: 'Steuerfreie Umsätze § 4 Nr. 1a UStG', kind: 'revenue' },
    { number: '8125', name: 'Steuerfreie innergemeinschaftliche Lieferungen § 4 Nr. 1b UStG', kind: 'revenue' },
    { number: '8195', name: 'Erlöse als Kleinunternehmer i. S. d. § 19 Abs. 1 UStG', kind: 'revenue' },
    { number: '8290', name: 'Erlöse 0 % USt', kind: 'revenue' },
    {
      number: '8336',
      name: 'Erlöse aus im anderen EU-Land steuerpflichtigen sonstigen Leistungen, für die der Leistungsempfänger die Umsatzsteuer schuldet',
      kind: 'revenue',
    },
    { number: '8338', name: 'Erlöse aus im Drittland steuerbaren Leistungen, im Inland nicht steuerbare Umsätze', kind: 'revenue' },
  ],
};

export const CHARTS: Readonly<Record<ChartName, Chart>> = { EKR, SKR03 };

/** DE → SKR03; AT and every other country → EKR (the service's home default, like the tax rates). */
export function chartForCountry(country: string | null | undefined): Chart {
  return (country ?? '').toUpperCase() === 'DE' ? SKR03 : EKR;
}
