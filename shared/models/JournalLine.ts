import { TenantModel } from './BaseModel';

/** One side of a journal entry: debit or credit (never both), a decimal string, on one ledger account. */
export class JournalLine extends TenantModel {
  static tableName = 'journal_lines';

  declare entryId: string;
  declare accountId: string;
  declare debit: string;
  declare credit: string;
}
