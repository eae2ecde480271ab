import { TenantModel } from './BaseModel';

export type BankStatementStatus = 'queued' | 'processing' | 'imported' | 'rejected';

/** Flags of a statement or its transactions (docs/bank-statements.md, "Flags"). */
export type BankFlag = 'unknownAccount' | 'foreignCurrency' | 'reversal' | 'overpaid';

/** A bank statement file as received (camt.053 or MT940) and what its import made of it. */
export class BankStatement extends TenantModel {
  static tableName = 'bank_statements';
  static jsonAttributes = ['warnings', 'flags'];

  declare status: BankStatementStatus;
  declare format: string | null;
  declare statementRef: string | null;
  declare account: string | null;
  declare accountIban: string | null;
  declare currency: string | null;
  /** Why it was rejected. */
  declare error: string | null;
  declare warnings: string[];
  declare flags: BankFlag[];
  declare entries: number;
  declare newEntries: number;
  declare duplicates: number;
  declare original: Buffer;
  declare mediaType: string;
  declare sha256: string;
  declare size: number;
  declare receivedAt: Date;
  declare processedAt: Date | null;
}
