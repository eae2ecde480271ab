import { Model } from 'objection';
import { TenantModel } from './BaseModel';
import { JournalLine } from './JournalLine';

/**
 * A posting in the general ledger (docs/ledger.md): balanced lines (a deferred trigger checks at
 * commit), once per source document (unique tenant, source_type, source_id), append-only: a
 * correction is a reversing entry (reversesEntryId).
 */
export class JournalEntry extends TenantModel {
  static tableName = 'journal_entries';

  /** The booking date, YYYY-MM-DD. */
  declare date: string;
  declare description: string;
  /** 'invoice' or 'invoice_cancellation' (shared/ledger/posting.ts). */
  declare sourceType: string;
  declare sourceId: string;
  declare reversesEntryId: string | null;
  declare createdAt: Date;
  declare lines?: JournalLine[];

  static get relationMappings() {
    return {
      lines: {
        relation: Model.HasManyRelation,
        modelClass: JournalLine,
        join: { from: 'journal_entries.id', to: 'journal_lines.entryId' },
      },
    };
  }
}
