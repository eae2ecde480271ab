import { TenantModel } from './BaseModel';

export type IncomingEinvoiceStatus = 'queued' | 'processing' | 'imported' | 'duplicate' | 'rejected';

/** One problem of an incoming e-invoice: an EN 16931 rule id (BR-CO-15) or our own (READ, TOTALS, INVOICE). */
export interface IncomingProblem {
  rule: string;
  message: string;
}

/**
 * An e-invoice as received (docs/e-invoicing-inbound.md, "Inbound API"): the original bytes,
 * unchanged, and what the import job made of them.
 */
export class IncomingEinvoice extends TenantModel {
  static tableName = 'incoming_einvoices';
  // jsonb: objection stringifies them on the way in (pg would not).
  static jsonAttributes = ['errors', 'warnings'];

  declare status: IncomingEinvoiceStatus;
  declare format: string | null;
  declare syntax: string | null;
  declare profile: string | null;
  declare invoiceId: string | null;
  /** The earlier upload of the same file (same sha256). */
  declare duplicateOf: string | null;
  declare errors: IncomingProblem[];
  declare warnings: string[];
  declare valid: boolean | null;
  declare original: Buffer;
  declare mediaType: string;
  declare sha256: string;
  declare size: number;
  declare supplierIdHint: string | null;
  declare receivedAt: Date;
  declare processedAt: Date | null;
}
