import { ROLES } from '../../../shared/actor';
import { pageQuery, listOf } from '../../schemas/common';
import { email, me, name, password } from '../auth/schemas';

/** A user as an admin sees it: the same fields as the user's own view (GET /api/auth/me). */
export const user = me;

export const userList = listOf(user);

export const listQuery = { type: 'object', additionalProperties: false, properties: { ...pageQuery } } as const;

export const create = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'name', 'role', 'password'],
  properties: { email, name, role: { type: 'string', enum: ROLES }, password },
} as const;

export const update = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { name, role: { type: 'string', enum: ROLES }, password },
} as const;
