import type { Knex } from 'knex';

/**
 * webhook_events.raw_body: the delivery's bytes exactly as received, kept when what is stored of
 * it is not what was received — a verified event whose strings held U+0000 or a lone surrogate
 * (`"\ud800"`), which json/jsonb cannot hold: `normalized` then has them removed / replaced by
 * U+FFFD (shared/storable.ts), and this column keeps the original, byte for byte. Null for every
 * other row: the normalized event is then what was parsed, and the hot path writes no more than
 * before. Nullable without a default: adding it rewrites nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table webhook_events add column raw_body bytea');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table webhook_events drop column if exists raw_body');
}
