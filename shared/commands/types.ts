import type { Knex } from 'knex';
import type { Actor } from '../actor';

/** What every use case receives: the open transaction it must run in and who acts. */
export interface CommandContext {
  trx: Knex.Transaction;
  actor: Actor;
}

/**
 * What a command gets before anyone is authenticated (login, its second factor, refresh,
 * registration): the transaction and the request id for its audit rows, but no actor, because
 * finding out who acts is the command's work. A successful login audits as the user it found.
 */
export interface AnonymousContext {
  trx: Knex.Transaction;
  requestId?: string;
}
