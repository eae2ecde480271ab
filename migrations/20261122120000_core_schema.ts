import type { Knex } from 'knex';

/**
 * The core schema every feature builds on. Conventions:
 * - UUID keys (gen_random_uuid), tenant_id on every tenant-owned row, indexes lead with tenant_id.
 * - Money is numeric(14,2), quantities numeric(14,4), tax rates numeric(5,2): never floats.
 * - timestamptz everywhere; soft delete via deleted_at where the spec asks for it.
 * - Enums from the spec are CHECK constraints, so bad data cannot enter even through SQL.
 */
const inList = (col: string, values: string[]) => `${col} in (${values.map((v) => `'${v}'`).join(', ')})`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('create extension if not exists pgcrypto');

  await knex.schema.createTable('tenants', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.string('country', 2).notNullable().defaultTo('AT');
    t.text('vat_id');
    t.text('tax_number');
    t.text('address');
    t.text('email');
    t.text('iban');
    t.text('bic');
    t.text('plan').notNullable().defaultTo('free');
    t.string('currency', 3).notNullable().defaultTo('EUR');
    // Templates, number formats, zugferdByDefault, DATEV numbers, chart of accounts choice.
    t.jsonb('settings').notNullable().defaultTo('{}');
    // Tax portal credentials, AES-256-GCM encrypted (shared/crypto/secretBox.ts); never returned.
    t.text('portal_credentials_enc');
    t.timestamps(true, true);
    t.check(inList('plan', ['free', 'pro', 'business']), [], 'tenants_plan_check');
    t.check("country ~ '^[A-Z]{2}$'", [], 'tenants_country_check');
  });

  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.text('name').notNullable();
    t.text('role').notNullable();
    t.text('password_hash').notNullable();
    t.boolean('active').notNullable().defaultTo(true);
    t.integer('failed_login_count').notNullable().defaultTo(0);
    t.integer('lockout_count').notNullable().defaultTo(0);
    t.timestamp('locked_until', { useTz: true });
    t.text('totp_secret_enc');
    t.boolean('totp_enabled').notNullable().defaultTo(false);
    t.jsonb('recovery_codes').notNullable().defaultTo('[]');
    t.text('webauthn_user_id');
    t.jsonb('webauthn_challenge');
    t.timestamp('last_login_at', { useTz: true });
    t.timestamps(true, true);
    t.check(inList('role', ['admin', 'manager', 'member', 'viewer']), [], 'users_role_check');
    t.index(['tenant_id']);
  });
  // Login is by e-mail across tenants, so e-mails are unique service-wide (case-insensitive).
  await knex.raw('create unique index users_email_unique on users (lower(email))');

  await knex.schema.createTable('webauthn_credentials', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('credential_id').notNullable().unique();
    t.binary('public_key').notNullable();
    t.bigInteger('counter').notNullable().defaultTo(0);
    t.jsonb('transports').notNullable().defaultTo('[]');
    t.text('device_type');
    t.boolean('backed_up');
    t.timestamps(true, true);
    t.index(['tenant_id', 'user_id']);
  });

  await knex.schema.createTable('refresh_tokens', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    // Rotation family: reuse of any spent token revokes every token of its family.
    t.uuid('family_id').notNullable();
    t.text('token_hash').notNullable().unique();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'user_id']);
    t.index(['family_id']);
  });

  await knex.schema.createTable('customers', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('company');
    t.text('email');
    t.text('phone');
    t.text('address');
    t.text('vat_id');
    t.string('country', 2);
    t.string('currency', 3);
    t.integer('payment_term_days');
    t.text('color');
    t.timestamps(true, true);
    t.timestamp('deleted_at', { useTz: true });
    t.index(['tenant_id', 'deleted_at']);
    t.check('payment_term_days is null or payment_term_days between 0 and 3650', [], 'customers_term_check');
  });
  await knex.raw('create index customers_purge_idx on customers (deleted_at) where deleted_at is not null');

  await knex.schema.createTable('suppliers', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('email');
    t.text('vat_id');
    t.text('address');
    t.text('iban');
    t.string('country', 2);
    // { stripe: "acct_…", paypal: "MERCHANTID", bank: "…" } — what the webhook pipeline matches on.
    t.jsonb('merchant_ids').notNullable().defaultTo('{}');
    t.text('default_expense_account');
    t.timestamps(true, true);
    t.timestamp('deleted_at', { useTz: true });
    t.index(['tenant_id', 'deleted_at']);
  });
  await knex.raw('create index suppliers_email_idx on suppliers (tenant_id, lower(email))');
  await knex.raw('create index suppliers_merchant_ids_idx on suppliers using gin (merchant_ids)');

  await knex.schema.createTable('invoices', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('type').notNullable();
    t.text('status').notNullable().defaultTo('entwurf');
    t.text('number');
    t.uuid('customer_id').references('customers.id').onDelete('SET NULL');
    t.uuid('supplier_id').references('suppliers.id').onDelete('SET NULL');
    // Taken at finalization so a finalized invoice stays complete after the customer is purged.
    t.jsonb('customer_snapshot');
    t.jsonb('seller_snapshot');
    t.string('currency', 3).notNullable().defaultTo('EUR');
    t.date('issue_date').notNullable();
    t.date('service_date');
    t.date('due_date');
    t.integer('payment_term_days');
    t.text('notes');
    t.text('footer_text');
    t.jsonb('custom_fields').notNullable().defaultTo('{}');
    t.text('details_markdown');
    t.decimal('total_net', 14, 2).notNullable().defaultTo(0);
    t.decimal('total_tax', 14, 2).notNullable().defaultTo(0);
    t.decimal('total_gross', 14, 2).notNullable().defaultTo(0);
    t.decimal('amount_paid', 14, 2).notNullable().defaultTo(0);
    t.jsonb('tax_breakdown').notNullable().defaultTo('[]');
    t.uuid('related_invoice_id').references('invoices.id');
    // Incoming invoices: the supplier's own number and date, and where they came from.
    t.text('invoice_number');
    t.date('invoice_date');
    t.text('source');
    t.text('external_id');
    // Bumped on every content change; rendered documents are cached per (invoice, version).
    t.integer('version').notNullable().defaultTo(1);
    t.uuid('created_by');
    t.timestamp('sent_at', { useTz: true });
    t.timestamp('finalized_at', { useTz: true });
    t.timestamp('cancelled_at', { useTz: true });
    t.timestamps(true, true);
    t.timestamp('deleted_at', { useTz: true });
    t.check(inList('type', ['rechnung', 'angebot', 'gutschrift', 'eingangsrechnung']), [], 'invoices_type_check');
    t.check(inList('status', ['entwurf', 'offen', 'teilbezahlt', 'bezahlt', 'storniert']), [], 'invoices_status_check');
    t.check('amount_paid >= 0', [], 'invoices_amount_paid_check');
    t.index(['tenant_id', 'issue_date']);
    t.index(['tenant_id', 'status']);
    t.index(['tenant_id', 'customer_id']);
    t.index(['tenant_id', 'type', 'issue_date']);
  });
  // Gapless numbering is enforced by the sequence table; this makes a duplicate number impossible.
  await knex.raw('create unique index invoices_number_unique on invoices (tenant_id, type, number) where number is not null');
  // Webhook idempotency: one incoming invoice per (tenant, source, externalId), whatever races.
  await knex.raw('create unique index invoices_external_unique on invoices (tenant_id, source, external_id) where external_id is not null');

  await knex.schema.createTable('invoice_items', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('invoice_id').notNullable().references('invoices.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.text('description').notNullable();
    t.text('unit');
    t.decimal('quantity', 14, 4).notNullable();
    t.decimal('unit_price', 14, 2).notNullable();
    t.decimal('tax_rate', 5, 2).notNullable();
    t.decimal('net_amount', 14, 2).notNullable();
    t.decimal('tax_amount', 14, 2).notNullable();
    t.decimal('gross_amount', 14, 2).notNullable();
    t.unique(['invoice_id', 'position']);
    t.index(['tenant_id', 'invoice_id']);
    t.check('position >= 1', [], 'invoice_items_position_check');
  });

  await knex.schema.createTable('payments', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('invoice_id').notNullable().references('invoices.id').onDelete('CASCADE');
    t.decimal('amount', 14, 2).notNullable();
    t.date('date').notNullable();
    t.text('method').notNullable();
    t.uuid('created_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'invoice_id']);
    t.index(['tenant_id', 'date']);
    t.check('amount > 0', [], 'payments_amount_check');
  });

  await knex.schema.createTable('invoice_number_sequences', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('type').notNullable();
    t.integer('year').notNullable();
    t.integer('last_value').notNullable().defaultTo(0);
    t.primary(['tenant_id', 'type', 'year']);
  });

  await knex.schema.createTable('connector_installations', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('provider').notNullable();
    // The URL token is looked up by its SHA-256; the token itself is kept only encrypted.
    t.text('token_hash').notNullable().unique();
    t.text('token_enc').notNullable();
    t.text('secrets_enc').notNullable();
    t.jsonb('settings').notNullable().defaultTo('{}');
    t.boolean('active').notNullable().defaultTo(true);
    t.timestamps(true, true);
    t.check(inList('provider', ['stripe', 'paypal', 'mollie', 'bank']), [], 'connector_provider_check');
  });
  await knex.raw('create unique index connector_active_unique on connector_installations (tenant_id, provider) where active');

  await knex.schema.createTable('webhook_events', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('connector_id').references('connector_installations.id').onDelete('SET NULL');
    t.text('provider').notNullable();
    t.text('event');
    // pending = stored and queued; the spec's four statuses are terminal.
    t.text('status').notNullable().defaultTo('pending');
    t.text('external_id');
    t.text('money_external_id');
    t.jsonb('normalized');
    t.text('error');
    t.uuid('invoice_id').references('invoices.id').onDelete('SET NULL');
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('processed_at', { useTz: true });
    t.check(inList('status', ['pending', 'processed', 'duplicate', 'failed', 'invalid_signature']), [], 'webhook_status_check');
    t.check(inList('provider', ['stripe', 'paypal', 'mollie', 'bank']), [], 'webhook_provider_check');
    t.index(['tenant_id', 'provider', 'received_at']);
  });

  await knex.schema.createTable('ledger_accounts', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('number').notNullable();
    t.text('name').notNullable();
    t.text('kind').notNullable();
    t.text('chart').notNullable();
    t.unique(['tenant_id', 'number']);
    t.check(inList('kind', ['asset', 'liability', 'equity', 'revenue', 'expense']), [], 'ledger_kind_check');
  });

  await knex.schema.createTable('journal_entries', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.date('date').notNullable();
    t.text('description').notNullable();
    t.text('source_type').notNullable();
    t.uuid('source_id').notNullable();
    t.uuid('reverses_entry_id').references('journal_entries.id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // One entry per source document, never twice (auto-post idempotency).
    t.unique(['tenant_id', 'source_type', 'source_id']);
    t.index(['tenant_id', 'date']);
  });

  await knex.schema.createTable('journal_lines', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('entry_id').notNullable().references('journal_entries.id').onDelete('CASCADE');
    t.uuid('account_id').notNullable().references('ledger_accounts.id');
    t.decimal('debit', 14, 2).notNullable().defaultTo(0);
    t.decimal('credit', 14, 2).notNullable().defaultTo(0);
    t.index(['tenant_id', 'entry_id']);
    t.index(['tenant_id', 'account_id']);
    t.check('debit >= 0 and credit >= 0 and (debit = 0 or credit = 0)', [], 'journal_lines_side_check');
  });
  // Double entry is a database invariant: at commit, every entry's debits equal its credits.
  await knex.raw(`
    create function journal_entry_balanced() returns trigger language plpgsql as $$
    declare d numeric; c numeric; eid uuid;
    begin
      eid := coalesce(new.entry_id, old.entry_id);
      select coalesce(sum(debit), 0), coalesce(sum(credit), 0) into d, c from journal_lines where entry_id = eid;
      if d <> c then
        raise exception 'journal entry % is unbalanced: debit % <> credit %', eid, d, c using errcode = '23514';
      end if;
      return null;
    end $$;
    create constraint trigger journal_lines_balanced after insert or update or delete on journal_lines
      deferrable initially deferred for each row execute function journal_entry_balanced();
  `);

  await knex.schema.createTable('report_submissions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('kind').notNullable().defaultTo('u30');
    t.integer('year').notNullable();
    t.text('period').notNullable();
    t.text('mode').notNullable();
    t.text('status').notNullable().defaultTo('queued');
    t.boolean('resubmission').notNullable().defaultTo(false);
    t.binary('payload');
    t.jsonb('portal_response');
    t.text('error');
    t.integer('attempts').notNullable().defaultTo(0);
    t.uuid('created_by');
    t.timestamps(true, true);
    t.check(inList('mode', ['test', 'live']), [], 'report_submissions_mode_check');
    t.check(inList('status', ['queued', 'submitted', 'accepted', 'rejected']), [], 'report_submissions_status_check');
    t.index(['tenant_id', 'year', 'period']);
  });

  await knex.schema.createTable('deliveries', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('invoice_id').notNullable().references('invoices.id').onDelete('CASCADE');
    t.text('channel').notNullable().defaultTo('email');
    t.text('to').notNullable();
    t.text('subject').notNullable();
    t.text('message').notNullable();
    t.text('status').notNullable().defaultTo('queued');
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('smtp_response');
    t.text('message_id');
    t.text('error');
    t.uuid('created_by');
    t.timestamp('sent_at', { useTz: true });
    t.timestamps(true, true);
    t.check(inList('status', ['queued', 'sending', 'sent', 'failed']), [], 'deliveries_status_check');
    t.index(['tenant_id', 'invoice_id']);
  });

  await knex.schema.createTable('documents', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('invoice_id').notNullable().references('invoices.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.integer('version').notNullable();
    t.text('content_type').notNullable();
    t.binary('content').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['invoice_id', 'kind', 'version']);
    t.index(['tenant_id', 'invoice_id']);
    t.check(inList('kind', ['pdf', 'zugferd', 'ebinterface']), [], 'documents_kind_check');
  });

  await knex.schema.createTable('idempotency_keys', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('key').notNullable();
    t.text('route').notNullable();
    t.text('request_hash').notNullable();
    t.integer('response_status');
    t.jsonb('response_body');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['tenant_id', 'route', 'key']);
  });

  await knex.schema.createTable('audit_log', (t) => {
    t.bigIncrements('id');
    t.uuid('tenant_id').references('tenants.id').onDelete('CASCADE');
    t.uuid('actor_user_id');
    t.text('action').notNullable();
    t.text('entity_type').notNullable();
    t.uuid('entity_id');
    t.jsonb('data').notNullable().defaultTo('{}');
    t.text('request_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'created_at']);
    t.index(['tenant_id', 'entity_type', 'entity_id']);
  });

  // Transactional outbox: jobs are written in the same transaction as the data they act on and
  // relayed to BullMQ after commit (or later by the worker's relay if Redis was down).
  await knex.schema.createTable('outbox', (t) => {
    t.bigIncrements('id');
    // The Redis key prefix of the deployment that wrote the row: its relays send it to its queues.
    t.text('prefix').notNullable();
    t.text('queue').notNullable();
    t.text('job_name').notNullable();
    t.text('job_id').notNullable();
    t.jsonb('payload').notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('last_error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('enqueued_at', { useTz: true });
  });
  await knex.raw('create index outbox_pending_idx on outbox (prefix, id) where enqueued_at is null');
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'outbox',
    'audit_log',
    'idempotency_keys',
    'documents',
    'deliveries',
    'report_submissions',
    'journal_lines',
    'journal_entries',
    'ledger_accounts',
    'webhook_events',
    'connector_installations',
    'invoice_number_sequences',
    'payments',
    'invoice_items',
    'invoices',
    'suppliers',
    'customers',
    'refresh_tokens',
    'webauthn_credentials',
    'users',
    'tenants',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
  await knex.raw('drop function if exists journal_entry_balanced()');
}
