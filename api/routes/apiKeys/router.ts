import { createRouter } from '../../routing';
import { db } from '../../../shared/db';
import { runInTransaction } from '../../../shared/outbox';
import { createApiKey, revokeApiKey, type CreateApiKeyInput } from '../../../shared/commands/apiKeys';
import { listApiKeys } from '../../../shared/queries/apiKeys';
import * as s from './schemas';

/**
 * API keys for server-to-server integrations (docs/auth.md, "API keys"). Admins only; an API key
 * itself can never reach these routes (403: api/middleware/authenticate.ts).
 */
export const { router: apiKeysRouter, add } = createRouter('/api/api-keys', 'API keys');

const refusedToKeys = 'Not available to API keys (403 FORBIDDEN).';

add<unknown, { page: number; limit: number }>({
  method: 'get',
  path: '/',
  auth: 'admin',
  summary: "The tenant's API keys (revoked ones included), newest first; never a secret",
  description: refusedToKeys,
  query: s.listQuery,
  responses: { 200: { description: 'API keys', schema: s.apiKeyList }, 401: s.err('Not authenticated'), 403: s.err('Role below admin, or an API key') },
  handler: async (ctx) => {
    ctx.body = await listApiKeys(db(), ctx.state.actor.tenantId, ctx.input.query);
  },
});

add<CreateApiKeyInput>({
  method: 'post',
  path: '/',
  auth: 'admin',
  summary: 'Create an API key; the answer shows the key once',
  description: `The key acts with its role in this tenant, sent as Authorization: Bearer <key>. It matches ak_live_[a-z2-7]{12}_[0-9A-Za-z]{43}. ${refusedToKeys}`,
  body: s.createBody,
  responses: {
    201: { description: 'Created; `key` is shown only here', schema: s.created },
    400: s.err('Invalid input (expiresAt in the past)'),
    401: s.err('Not authenticated'),
    403: s.err("Role below admin, a role above the creator's, or an API key"),
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.status = 201;
    ctx.body = await runInTransaction((trx) => createApiKey({ trx, actor }, ctx.input.body));
  },
});

add({
  method: 'delete',
  path: '/:id',
  auth: 'admin',
  summary: 'Revoke an API key (at once: its next request is 401)',
  description: refusedToKeys,
  responses: {
    204: { description: 'Revoked (also when it already was)' },
    401: s.err('Not authenticated'),
    403: s.err('Role below admin, or an API key'),
    404: s.err('Not found (or another tenant’s)'),
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    await runInTransaction((trx) => revokeApiKey({ trx, actor }, ctx.input.params.id));
    ctx.status = 204;
  },
});
