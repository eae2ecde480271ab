import { createRouter } from '../../routing';
import { errorEnvelope } from '../../schemas/common';
import { db } from '../../../shared/db';
import { runInTransaction } from '../../../shared/outbox';
import { updateSettings, type SettingsUpdate } from '../../../shared/commands/settings';
import { getSettings } from '../../../shared/queries/settings';
import * as s from './schemas';

/** Tenant settings: managers read, admins change. Portal credentials are write-only. */
export const { router: settingsRouter, add } = createRouter('/api/settings', 'Settings');

const err = (description: string) => ({ description, schema: errorEnvelope });

add({
  method: 'get',
  path: '/',
  auth: 'manager',
  summary: "The tenant's settings (portal credentials only as portalCredentialsConfigured)",
  responses: { 200: { description: 'Settings', schema: s.settings }, 403: err('Role below manager') },
  handler: async (ctx) => {
    ctx.body = await getSettings(db(), ctx.state.actor.tenantId);
  },
});

add<SettingsUpdate>({
  method: 'put',
  path: '/',
  auth: 'admin',
  summary: 'Change settings (partial: only the fields sent change)',
  body: s.update,
  responses: {
    200: { description: 'Updated settings', schema: s.settings },
    400: err('Invalid input (VAT ID, IBAN, BIC formats are checked)'),
    403: err('Role below admin'),
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => updateSettings({ trx, actor }, ctx.input.body));
  },
});
