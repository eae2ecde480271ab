import { TenantModel } from './BaseModel';
import type { BankFlag } from './BankStatement';
import type { Direction } from '../domain/bankStatements';

export type BankTransactionStatus = 'unmatched' | 'matched' | 'ignored';
export const BANK_TRANSACTION_STATUSES: BankTransactionStatus[] = ['unmatched', 'matched', 'ignored'];

/** One booked entry of a bank account, stored once per tenant (unique dedupKey), and what it paid. */
export class BankTransaction extends TenantModel {
  static tableName = 'bank_transactions';
  static jsonAttributes = ['flags'];

  declare statementId: string;
  declare dedupKey: string;
  declare account: string;
  declare bookingDate: string;
  declare valueDate: string | null;
  /** Positive decimal string; direction says which way. */
  declare amount: string;
  declare direction: Direction;
  declare currency: string;
  declare reversal: boolean;
  declare counterpartyName: string | null;
  declare counterpartyIban: string | null;
  declare remittance: string | null;
  declare creditorReference: string | null;
  declare endToEndId: string | null;
  declare entryReference: string | null;
  declare bankText: string | null;
  declare status: BankTransactionStatus;
  declare flags: BankFlag[];
  declare note: string | null;
  declare invoiceId: string | null;
  declare paymentId: string | null;
  declare matchedAmount: string | null;
  declare matchRule: string | null;
  declare createdAt: Date;
  declare updatedAt: Date;
}
