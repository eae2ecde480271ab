import { createRouter } from '../../routing';
import { db } from '../../../shared/db';
import { runInTransaction } from '../../../shared/outbox';
import { installConnector, uninstallConnector, updateConnectorSettings } from '../../../shared/commands/connectors';
import { getConnector, listWebhookLogs } from '../../../shared/queries/connectors';
import { runTestWebhook } from '../../../shared/webhooks/testWebhook';
import type { ProviderSecrets } from '../../../shared/providers/payments';
import type { ConnectorSettings } from '../../../shared/domain/connectorSettings';
import { connectorView, errorResponses, installBody, installResponse, logEntry, logsQuery, settingsBody, testWebhookResponse } from './schemas';

/**
 * Payment-provider connectors: stripe, paypal, mollie, bank (docs/webhooks.md). Roles
 * (docs/roles.md): install and uninstall admin; settings, test-webhook and webhook-logs manager
 * and above. An unknown slug is 404.
 */
export const { router: connectorsRouter, add } = createRouter('/api/connectors', 'Connectors');

type SlugParams = { slug: string };

add<ProviderSecrets, unknown, SlugParams>({
  method: 'post',
  path: '/:slug/install',
  auth: 'admin',
  summary: 'Install or reinstall a connector (reinstall rotates the webhook URL token)',
  body: installBody,
  responses: { 201: { description: 'Installed', schema: installResponse }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.status = 201;
    ctx.body = await runInTransaction((trx) => installConnector({ trx, actor }, ctx.input.params.slug, ctx.input.body));
  },
});

add<unknown, unknown, SlugParams>({
  method: 'get',
  path: '/:slug',
  auth: 'manager',
  summary: 'Connector settings and webhook URL (never the secrets)',
  responses: { 200: { description: 'Connector', schema: connectorView }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await getConnector(db(), ctx.state.actor.tenantId, ctx.input.params.slug);
  },
});

add<ConnectorSettings, unknown, SlugParams>({
  method: 'put',
  path: '/:slug/settings',
  auth: 'manager',
  summary: 'Update connector settings (fields present replace the stored ones)',
  body: settingsBody,
  responses: { 200: { description: 'Connector', schema: connectorView }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => updateConnectorSettings({ trx, actor }, ctx.input.params.slug, ctx.input.body));
  },
});

add<unknown, unknown, SlugParams>({
  method: 'delete',
  path: '/:slug',
  auth: 'admin',
  summary: 'Uninstall a connector (its webhook URL answers 404 from now on)',
  responses: { 204: { description: 'Uninstalled' }, ...errorResponses },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    await runInTransaction((trx) => uninstallConnector({ trx, actor }, ctx.input.params.slug));
    ctx.status = 204;
  },
});

add<unknown, { limit: number; cursor?: string }, SlugParams>({
  method: 'get',
  path: '/:slug/webhook-logs',
  auth: 'manager',
  summary: 'Webhook log of this provider, newest first (bare array; limit default 50, max 200)',
  description:
    'The X-Next-Cursor response header (absent at the end) passed back as cursor gives the entries after this page, by an index range whatever the depth (docs/lists.md).',
  query: logsQuery,
  responses: { 200: { description: 'Log entries', schema: { type: 'array', items: logEntry } }, ...errorResponses },
  handler: async (ctx) => {
    const page = await listWebhookLogs(db(), ctx.state.actor.tenantId, ctx.input.params.slug, ctx.input.query);
    // The contract's bare array has no envelope: the next position travels in a header.
    if (page.nextCursor) ctx.set('X-Next-Cursor', page.nextCursor);
    ctx.body = page.data;
  },
});

add<unknown, unknown, SlugParams>({
  method: 'post',
  path: '/:slug/test-webhook',
  auth: 'manager',
  summary: 'Run a synthetic event through the full pipeline; nothing is persisted',
  responses: { 200: { description: 'What each step did', schema: testWebhookResponse }, ...errorResponses },
  handler: async (ctx) => {
    ctx.body = await runTestWebhook(ctx.state.actor, ctx.input.params.slug, ctx.config);
  },
});
