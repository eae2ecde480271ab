/**
 * Operators: the published base rates for default interest (docs/dunning.md, "Base rates").
 *   npm run base-rate -- list DE
 *   npm run base-rate -- add DE 2027-01-01 1.27 [--replace]
 * A new rate is data: no release, no migration. Dunning notices issued before keep their amounts.
 */
import { config, ConfigError } from '../shared/config';
import { db, closeDb } from '../shared/db';
import { addBaseRate } from '../shared/commands/baseRates';
import { loadBaseRates } from '../shared/queries/dunning';
import { AppError } from '../shared/errors';

const [command, country, validFrom, rate, ...flags] = process.argv.slice(2);
try {
  config();
  if (command === 'list' && country) {
    for (const r of await loadBaseRates(db(), country)) console.log(`${country} ${r.validFrom} ${r.rate}`);
  } else if (command === 'add' && country && validFrom && rate) {
    const { status } = await db().transaction((trx) => addBaseRate({ trx }, { country, validFrom, rate, replace: flags.includes('--replace') }));
    console.log(`${country} ${validFrom} ${rate}: ${status}`);
  } else {
    console.error('usage: npm run base-rate -- list AT|DE\n       npm run base-rate -- add AT|DE YYYY-MM-DD RATE [--replace]');
    process.exitCode = 2;
  }
} catch (err) {
  if (err instanceof AppError) {
    console.error(`${err.message}${err.details ? `: ${err.details.map((d) => `${d.field} ${d.message}`).join('; ')}` : ''}`);
    process.exitCode = 1;
  } else if (err instanceof ConfigError) {
    console.error(err.message);
    process.exitCode = 2;
  } else throw err;
} finally {
  await closeDb();
}
