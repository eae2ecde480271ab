import { ROLES } from '../../../shared/actor';
import { pageQuery, listOf } from '../../schemas/common';
import { email, name, password, publicUser } from '../auth/schemas';

export const user = {
  type: 'object',
  properties: {
    ...publicUser.properties,
    active: { type: 'boolean' },
    twoFactorEnabled: { type: 'boolean' },
    createdAt: { type: 'string', format: 'date-time' },
    lastLoginAt: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

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
