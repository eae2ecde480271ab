import type { PartialModelObject } from 'objection';
import type { Db } from '../../db';
import { invalidInput } from '../../errors';
import { now } from '../../clock';
import { todayVienna } from '../../domain/dates';
import { validateManualExchangeRate, type ExchangeRate } from '../../domain/exchangeRates';
import type { InvoiceInput } from '../../domain/invoiceInput';
import { exchangeRateOn } from '../../queries/exchangeRates';
import type { Invoice } from '../../models/Invoice';

/**
 * The rate a create or full update stores from the input (docs/exchange-rates.md): a manual rate
 * for a document in another currency than EUR, checked by the domain rule; null when absent.
 * A rate on an EUR document, or one the client calls 'ecb', is 400 INVALID_INPUT naming the field.
 */
export function manualExchangeRate(currency: string, input: Pick<InvoiceInput, 'exchangeRate'>): ExchangeRate | null {
  const given = input.exchangeRate;
  if (given == null) return null;
  if (currency === 'EUR') {
    throw invalidInput('Invoice failed validation', [
      { field: 'exchangeRate', message: 'is only for documents in another currency than EUR (this one is in EUR); send null or omit it' },
    ]);
  }
  return validateManualExchangeRate(given, todayVienna(now()));
}

/**
 * The ECB rate of `currency` on `date` (the last one published before it on a day without one),
 * or 400 INVALID_INPUT on exchangeRate when the feed has none: the user enters the rate then.
 * `what` names the document and day in the message.
 */
export async function ecbExchangeRate(trx: Db, currency: string, date: string, what: string): Promise<ExchangeRate> {
  const ecb = await exchangeRateOn(trx, currency, date);
  if (!ecb) {
    throw invalidInput(`No ECB exchange rate for ${currency} on ${date}: enter the rate`, [
      {
        field: 'exchangeRate',
        message: `the ECB has published no ${currency} rate for ${what} (${date}) or the 7 days before it; enter the rate used as exchangeRate { rate, date, source: 'manual' } (units of ${currency} per EUR)`,
      },
    ]);
  }
  return { rate: ecb.rate, date: ecb.date, source: 'ecb' };
}

/** The invoice columns that store a rate (all null: none). */
export const exchangeRateColumns = (r: ExchangeRate | null) =>
  ({
    exchangeRate: r?.rate ?? null,
    exchangeRateDate: r?.date ?? null,
    exchangeRateSource: r?.source ?? null,
  }) satisfies PartialModelObject<Invoice>;
