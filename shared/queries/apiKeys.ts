import type { Db } from '../db';
import type { Role } from '../actor';
import { notFound } from '../errors';
import type { ApiKey } from '../models/ApiKey';
import { API_KEY_PREFIX } from '../auth/apiKeys';
import { pageEnvelope } from './paging';

/** An API key as the list shows it: never the secret or its hash. */
export interface ApiKeyView {
  id: string;
  name: string;
  role: Role;
  prefix: string;
  createdAt: string;
  createdBy: string | null;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

type Row = Pick<ApiKey, 'id' | 'name' | 'role' | 'publicId' | 'createdAt' | 'createdBy' | 'expiresAt' | 'lastUsedAt' | 'revokedAt'>;
const COLUMNS = ['id', 'name', 'role', 'publicId', 'createdAt', 'createdBy', 'expiresAt', 'lastUsedAt', 'revokedAt'] as const;

const iso = (v: Date | string | null) => (v ? new Date(v).toISOString() : null);

export const apiKeyView = (r: Row): ApiKeyView => ({
  id: r.id,
  name: r.name,
  role: r.role,
  prefix: `${API_KEY_PREFIX}${r.publicId}`,
  createdAt: iso(r.createdAt)!,
  createdBy: r.createdBy ?? null,
  expiresAt: iso(r.expiresAt),
  lastUsedAt: iso(r.lastUsedAt),
  revokedAt: iso(r.revokedAt),
});

/** The tenant's keys, newest first, revoked ones included (they show revokedAt). */
export async function listApiKeys(q: Db, tenantId: string, page: { page: number; limit: number }) {
  const [{ total }] = await q('apiKeys').where({ tenantId }).count<{ total: number }[]>({ total: '*' });
  const rows: Row[] = await q('apiKeys')
    .where({ tenantId })
    .select(COLUMNS)
    .orderBy([
      { column: 'createdAt', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(page.limit)
    .offset((page.page - 1) * page.limit);
  const t = Number(total);
  return { data: rows.map(apiKeyView), pagination: pageEnvelope(page, t) };
}

export async function getApiKey(q: Db, tenantId: string, id: string): Promise<ApiKeyView> {
  const row: Row | undefined = await q('apiKeys').where({ tenantId, id }).first(COLUMNS);
  if (!row) throw notFound('API key');
  return apiKeyView(row);
}
