/**
 * ISO 4217 codes we accept for customers and invoices: the EU/EEA currencies and the currencies
 * our users invoice in most. Exponent = minor-unit digits (JPY has none), for provider amounts.
 */
export const CURRENCY_EXPONENTS: Record<string, number> = {
  EUR: 2,
  USD: 2,
  GBP: 2,
  CHF: 2,
  CZK: 2,
  DKK: 2,
  HUF: 2,
  PLN: 2,
  RON: 2,
  SEK: 2,
  NOK: 2,
  ISK: 0,
  BGN: 2,
  RSD: 2,
  BAM: 2,
  MKD: 2,
  ALL: 2,
  TRY: 2,
  UAH: 2,
  CAD: 2,
  AUD: 2,
  NZD: 2,
  JPY: 0,
  CNY: 2,
  HKD: 2,
  SGD: 2,
  INR: 2,
  ZAR: 2,
  BRL: 2,
  MXN: 2,
  AED: 2,
  ILS: 2,
  KRW: 0,
};
export const CURRENCIES = Object.keys(CURRENCY_EXPONENTS);
export const isCurrency = (c: unknown): c is string => typeof c === 'string' && c in CURRENCY_EXPONENTS;
