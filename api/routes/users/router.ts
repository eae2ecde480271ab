import { createRouter } from '../../routing';
import { errorEnvelope } from '../../schemas/common';
import { db } from '../../../shared/db';
import { runInTransaction } from '../../../shared/outbox';
import {
  createUser,
  deactivateUser,
  reactivateUser,
  resetUserTwoFactor,
  updateUser,
  type CreateUserInput,
  type UpdateUserInput,
} from '../../../shared/commands/users';
import { getUser, listUsers } from '../../../shared/queries/users';
import * as s from './schemas';

/**
 * Team management (manager and admin). Managers manage members and viewers only; the last active
 * admin cannot be demoted or deactivated (400 DEPENDENCY). Users of other tenants are 404.
 */
export const { router: usersRouter, add } = createRouter('/api/users', 'Users');

const err = (description: string) => ({ description, schema: errorEnvelope });

add<unknown, { page: number; limit: number }>({
  method: 'get',
  path: '/',
  auth: 'manager',
  summary: "The tenant's users (active and deactivated)",
  query: s.listQuery,
  responses: { 200: { description: 'Users', schema: s.userList }, 403: err('Role below manager') },
  handler: async (ctx) => {
    ctx.body = await listUsers(db(), ctx.state.actor.tenantId, ctx.input.query);
  },
});

add({
  method: 'get',
  path: '/:id',
  auth: 'manager',
  summary: 'One user',
  responses: { 200: { description: 'User', schema: s.user }, 404: err('Not found') },
  handler: async (ctx) => {
    ctx.body = await getUser(db(), ctx.state.actor.tenantId, ctx.input.params.id);
  },
});

add<CreateUserInput>({
  method: 'post',
  path: '/',
  auth: 'manager',
  summary: 'Add a user (admin: any role; manager: member or viewer)',
  body: s.create,
  responses: {
    201: { description: 'Created', schema: s.user },
    400: err('Invalid input'),
    403: err('Role not permitted'),
    409: err('E-mail already in use'),
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.status = 201;
    ctx.body = await runInTransaction((trx) => createUser({ trx, actor }, ctx.input.body));
  },
});

add<UpdateUserInput>({
  method: 'put',
  path: '/:id',
  auth: 'manager',
  summary: "Change a user's name, role or password",
  description: 'A new password ends all sessions of that user. Demoting the last active admin is 400 DEPENDENCY.',
  body: s.update,
  responses: {
    200: { description: 'Updated', schema: s.user },
    400: err('Invalid input, or the last admin would be demoted (DEPENDENCY)'),
    403: err('Role not permitted'),
    404: err('Not found'),
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => updateUser({ trx, actor }, ctx.input.params.id, ctx.input.body));
  },
});

add({
  method: 'delete',
  path: '/:id',
  auth: 'manager',
  summary: 'Deactivate a user (sessions end; the record stays for the audit trail)',
  responses: {
    204: { description: 'Deactivated' },
    400: err('Last active admin (DEPENDENCY)'),
    403: err('Role not permitted'),
    404: err('Not found'),
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    await runInTransaction((trx) => deactivateUser({ trx, actor }, ctx.input.params.id));
    ctx.status = 204;
  },
});

add({
  method: 'post',
  path: '/:id/2fa/reset',
  auth: 'admin',
  summary: "Remove a user's second factor (TOTP, passkeys, recovery codes) for a user who lost it; the user is e-mailed",
  description: 'Audited (user.two_factor_reset). Not on oneself: another admin resets an admin’s second factor (403).',
  responses: {
    200: { description: 'The user, now without a second factor', schema: s.user },
    403: err('Role below admin, or the own account'),
    404: err('Not found'),
  },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => resetUserTwoFactor({ trx, actor }, ctx.input.params.id));
  },
});

add({
  method: 'post',
  path: '/:id/reactivate',
  auth: 'admin',
  summary: 'Reactivate a deactivated user (they can log in again); the user is e-mailed',
  description: 'Audited (user.reactivated). An active user is answered unchanged, without an e-mail.',
  responses: { 200: { description: 'The user, active', schema: s.user }, 403: err('Role below admin'), 404: err('Not found') },
  handler: async (ctx) => {
    const actor = ctx.state.actor;
    ctx.body = await runInTransaction((trx) => reactivateUser({ trx, actor }, ctx.input.params.id));
  },
});
