import { roleRank, type Role } from '../actor';
import { audit } from '../audit';
import { currentActor } from '../auth/currentActor';
import { generateApiKey } from '../auth/apiKeys';
import { forbidden, invalidInput, notFound } from '../errors';
import { nowMs } from '../clock';
import { ApiKey } from '../models/ApiKey';
import { apiKeyView, type ApiKeyView } from '../queries/apiKeys';
import type { CommandContext } from './types';

export interface CreateApiKeyInput {
  name: string;
  role: Role;
  expiresAt?: string | null;
}

/** What creation answers: the one time the whole key is shown. */
export type CreatedApiKey = Pick<ApiKeyView, 'id' | 'name' | 'role' | 'prefix' | 'createdAt' | 'expiresAt'> & { key: string };

/**
 * Creates a key for the actor's tenant with a role no higher than the creator's current role
 * (re-read: a demoted admin's token cannot mint an admin key). Only the key's hash is stored;
 * the audit row names the key's prefix, never its secret.
 */
export async function createApiKey({ trx, actor: tokenActor }: CommandContext, input: CreateApiKeyInput): Promise<CreatedApiKey> {
  const actor = await currentActor(trx, tokenActor, 'admin');
  if (roleRank(input.role) > roleRank(actor.role)) throw forbidden(`A key's role cannot be higher than your own (${actor.role})`);
  if (input.expiresAt && new Date(input.expiresAt).getTime() <= nowMs()) {
    throw invalidInput('Body failed validation', [{ field: 'expiresAt', message: 'must be in the future' }]);
  }
  const k = generateApiKey();
  const row = await ApiKey.query(trx)
    .insert({
      tenantId: actor.tenantId,
      name: input.name.trim(),
      role: input.role,
      publicId: k.publicId,
      secretHash: k.secretHash,
      createdBy: actor.userId,
      expiresAt: input.expiresAt ? new Date(input.expiresAt) : null,
    })
    .returning('*');
  await audit(trx, actor, { action: 'apiKey.created', entityType: 'apiKey', entityId: row.id, data: { name: row.name, role: row.role, prefix: k.prefix } });
  const { id, name, role, prefix, createdAt, expiresAt } = apiKeyView(row);
  return { id, name, role, key: k.key, prefix, createdAt, expiresAt };
}

/**
 * Revokes a key at once: authentication reads the key row on every request (no cache), so the
 * next request with it is 401. Revoking a revoked key changes nothing and is not an error.
 */
export async function revokeApiKey({ trx, actor: tokenActor }: CommandContext, id: string): Promise<void> {
  const actor = await currentActor(trx, tokenActor, 'admin');
  const row = await ApiKey.query(trx).where({ tenantId: actor.tenantId, id }).forUpdate().first();
  if (!row) throw notFound('API key');
  if (row.revokedAt) return;
  await ApiKey.query(trx)
    .where({ tenantId: actor.tenantId, id })
    .patch({ revokedAt: trx.fn.now() as unknown as Date, revokedBy: actor.userId });
  await audit(trx, actor, { action: 'apiKey.revoked', entityType: 'apiKey', entityId: id, data: { name: row.name, prefix: apiKeyView(row).prefix } });
}
