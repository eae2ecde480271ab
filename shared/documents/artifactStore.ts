import type { Knex } from 'knex';
import { db } from '../db';
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

  async has(key: ArtifactKey): Promise<boolean> {
    const row = await this.knex()('documents')
      .where({ tenantId: key.tenantId, invoiceId: key.invoiceId, kind: key.kind, version: key.version })
      .first(this.knex().raw('1 as found'));
    return !!row;
  }

  async put(key: ArtifactKey, content: Buffer, contentType: string): Promise<void> {
    await this.knex()('documents')
      .insert({ tenantId: key.tenantId, invoiceId: key.invoiceId, kind: key.kind, version: key.version, contentType, content })
      .onConflict(['invoiceId', 'kind', 'version'])
      .ignore();
  }
}

export const artifactStore: ArtifactStore = new PostgresArtifactStore();
