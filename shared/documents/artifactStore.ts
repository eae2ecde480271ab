import type { Knex } from 'knex';
import { db, runCompiledSql } from '../db';
import type { DocumentKind } from './kinds';

/**
 * Rendered documents, cached per (invoice, kind, version). An invoice's version changes with
 * every content change of a draft; a finalized invoice never changes, so its documents are
 * rendered once. Postgres (bytea) is the store; the interface allows an object store later.
 */
export interface ArtifactKey {
  tenantId: string;
  invoiceId: string;
  kind: DocumentKind;
  version: number;
}

export interface ArtifactStore {
  get(key: ArtifactKey): Promise<Buffer | null>;
  /** Whether the artifact is stored, without reading it. */
  has(key: ArtifactKey): Promise<boolean>;
  /** Idempotent: a second put for the same key keeps the first (identical) artifact. */
  put(key: ArtifactKey, content: Buffer, contentType: string): Promise<void>;
}

export class PostgresArtifactStore implements ArtifactStore {
  constructor(private readonly knex: () => Knex = db) {}

  async get(key: ArtifactKey): Promise<Buffer | null> {
    const row = await this.knex()('documents')
      .where({ tenantId: key.tenantId, invoiceId: key.invoiceId, kind: key.kind, version: key.version })
      .first('content');
    return row ? (row.content as Buffer) : null;
  }

  // has and put run once per render job: statements prepared once per connection (runCompiledSql).
  async has(key: ArtifactKey): Promise<boolean> {
    const rows = await runCompiledSql(
      this.knex(),
      'select 1 as found from documents where tenant_id = ? and invoice_id = ? and kind = ? and version = ? limit 1',
      [key.tenantId, key.invoiceId, key.kind, key.version],
    );
    return rows.length > 0;
  }

  async put(key: ArtifactKey, content: Buffer, contentType: string): Promise<void> {
    await runCompiledSql(
      this.knex(),
      `insert into documents (tenant_id, invoice_id, kind, version, content_type, content) values (?, ?, ?, ?, ?, ?)
       on conflict (invoice_id, kind, version) do nothing`,
      [key.tenantId, key.invoiceId, key.kind, key.version, contentType, content],
    );
  }
}

export const artifactStore: ArtifactStore = new PostgresArtifactStore();
