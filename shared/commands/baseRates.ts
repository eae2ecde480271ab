import type { Knex } from 'knex';
import { invalidInput, duplicate, type ErrorDetail } from '../errors';
import { isValidDate } from '../domain/dates';
import { dec } from '../domain/money';

/**
 * Add a published base rate (docs/dunning.md, "Base rates"): reference data of no tenant, so
 * `{ trx }` only. Operators run it through `npm run base-rate -- add DE 2027-01-01 1.27`: a new
 * rate is data, not a release. Adding the same value again changes nothing; another value for a
 * day already stored is refused unless `replace` (a correction of a typo).
 */
export async function addBaseRate(
  { trx }: { trx: Knex.Transaction },
  input: { country: string; validFrom: string; rate: string; replace?: boolean },
): Promise<{ status: 'added' | 'unchanged' | 'replaced' }> {
  const details: ErrorDetail[] = [];
  if (input.country !== 'AT' && input.country !== 'DE') details.push({ field: 'country', message: 'must be AT or DE' });
  if (!isValidDate(input.validFrom)) details.push({ field: 'validFrom', message: 'must be a date YYYY-MM-DD' });
  if (!/^-?\d{1,2}(\.\d{1,2})?$/.test(input.rate)) details.push({ field: 'rate', message: 'must be percent a year with at most 2 places, e.g. 1.27 or -0.88' });
  if (details.length) throw invalidInput('Base rate refused', details);
  const existing: { rate: string } | undefined = await trx('base_rates')
    .where({ country: input.country, validFrom: input.validFrom })
    .forUpdate()
    .first('rate');
  if (existing && dec(existing.rate).eq(dec(input.rate))) return { status: 'unchanged' };
  if (existing && !input.replace) {
    throw duplicate(`${input.country} already has ${existing.rate} % from ${input.validFrom}; pass --replace to correct it`);
  }
  if (existing) {
    await trx('base_rates').where({ country: input.country, validFrom: input.validFrom }).update({ rate: input.rate });
    return { status: 'replaced' };
  }
  await trx('base_rates').insert({ country: input.country, validFrom: input.validFrom, rate: input.rate });
  return { status: 'added' };
}
