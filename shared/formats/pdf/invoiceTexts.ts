/**
 * Wording per document type. German, because the legal texts an Austrian or German auditor
 * expects (§ 11 UStG AT, § 14 UStG DE) are German.
 */
import type { InvoiceType } from '../../domain/invoiceView';

export interface TypeTexts {
  title: string;
  numberLabel: string;
  dateLabel: string;
  /** Label for dueDate: a payment deadline, or for quotes the end of the offer's validity. */
  dueLabel: string;
}

export const TYPE_TEXTS: Record<InvoiceType, TypeTexts> = {
  rechnung: { title: 'Rechnung', numberLabel: 'Rechnungsnummer', dateLabel: 'Rechnungsdatum', dueLabel: 'Fällig am' },
  angebot: { title: 'Angebot', numberLabel: 'Angebotsnummer', dateLabel: 'Angebotsdatum', dueLabel: 'Gültig bis' },
  gutschrift: { title: 'Gutschrift', numberLabel: 'Gutschriftsnummer', dateLabel: 'Gutschriftsdatum', dueLabel: 'Fällig am' },
  eingangsrechnung: {
    title: 'Eingangsrechnung',
    numberLabel: 'Rechnungsnummer (Lieferant)',
    dateLabel: 'Rechnungsdatum',
    dueLabel: 'Fällig am',
  },
};

export const DRAFT_LABEL = 'ENTWURF';
export const CANCELLED_LABEL = 'STORNIERT';
export const DRAFT_NUMBER = 'wird bei Versand vergeben';

export const TABLE_HEADERS = {
  position: 'Pos.',
  description: 'Beschreibung',
  quantity: 'Menge',
  unit: 'Einheit',
  unitPrice: 'Einzelpreis',
  taxRate: 'USt %',
  net: 'Netto',
} as const;

export const TOTAL_LABELS = {
  net: 'Summe netto',
  taxPerRate: (rate: string, base: string) => `USt ${rate} auf ${base}`,
  tax: 'Summe USt',
  gross: 'Gesamtbetrag brutto',
  paid: 'Bereits bezahlt',
  due: 'Offener Betrag',
} as const;

const PAYMENT_METHODS: Record<string, string> = {
  bank_transfer: 'Überweisung',
  transfer: 'Überweisung',
  ueberweisung: 'Überweisung',
  sepa_debit: 'SEPA-Lastschrift',
  cash: 'Bar',
  bar: 'Bar',
  card: 'Karte',
  credit_card: 'Kreditkarte',
  paypal: 'PayPal',
  stripe: 'Stripe',
};

/** Known method slugs in German; anything else is printed as recorded. */
export function paymentMethodLabel(method: string): string {
  return PAYMENT_METHODS[method.toLowerCase()] ?? method;
}
