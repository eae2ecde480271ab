import { ROLES } from '../../../shared/actor';
import { errorEnvelope, listOf, pageQuery, timestamp, uuid } from '../../schemas/common';

const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;
const prefix = {
  type: 'string',
  pattern: '^ak_live_[a-z2-7]{12}$',
  description: 'The public start of the key, e.g. ak_live_k3v9q2m7x4ab (not secret)',
} as const;

export const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'role'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S', description: 'What the key is for, e.g. "Shop sync"' },
    role: { type: 'string', enum: ROLES, description: "The key's role; at most the creator's" },
    expiresAt: { ...nullableTimestamp, description: 'When the key stops working (in the future); null or absent: never' },
  },
} as const;

export const created = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'role', 'key', 'prefix', 'createdAt', 'expiresAt'],
  properties: {
    id: uuid,
    name: { type: 'string' },
    role: { type: 'string', enum: ROLES },
    key: {
      type: 'string',
      pattern: '^ak_live_[a-z2-7]{12}_[0-9A-Za-z]{43}$',
      description: 'The whole key, shown this once: only its hash is stored. Send it as Authorization: Bearer <key>.',
    },
    prefix,
    createdAt: timestamp,
    expiresAt: nullableTimestamp,
  },
} as const;

export const apiKey = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'role', 'prefix', 'createdAt', 'createdBy', 'expiresAt', 'lastUsedAt', 'revokedAt'],
  properties: {
    id: uuid,
    name: { type: 'string' },
    role: { type: 'string', enum: ROLES },
    prefix,
    createdAt: timestamp,
    createdBy: { type: ['string', 'null'], format: 'uuid', description: 'The user who created the key' },
    expiresAt: nullableTimestamp,
    lastUsedAt: { ...nullableTimestamp, description: 'Last authenticated request, to the minute' },
    revokedAt: nullableTimestamp,
  },
} as const;

export const apiKeyList = listOf(apiKey);

export const listQuery = { type: 'object', additionalProperties: false, properties: { ...pageQuery } } as const;

export const err = (description: string) => ({ description, schema: errorEnvelope });
