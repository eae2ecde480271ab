import type { Knex } from 'knex';
import type { Actor } from '../actor';

/** What every use case receives: the open transaction it must run in and who acts. */
export interface CommandContext {
  trx: Knex.Transaction;
  actor: Actor;
}
