import { QUEUES, type QueueName } from '../queues';
import { DOCUMENT_KINDS, renderJobId, type DocumentKind } from '../documents/kinds';
import { monthPeriod, quarterPeriod, type TaxPeriod } from '../domain/tax/period';
import { ACCOUNT_NOTICES, type AccountNotice } from '../domain/accountEmails';
import { WEBHOOK_BACKOFF_TYPE } from '../domain/outboundWebhooks';
import { defineJob, oneOfSchemas, payloadSchema, type AnyJobDefinition, type PayloadOf } from './define';

/**
 * Every job of the service, declared once (docs/jobs.md): queue, name, payload type and schema,
 * id from business keys, options. Producers add jobs only through these entries; the worker maps
 * each to its handler (workers/registry.ts). Payloads carry ids only, never secrets or personal
 * data. Job ids are stored business keys (outbox, Redis): never change one. Schemas tolerate
 * extra keys so queued jobs survive a rolling deploy that adds an optional key.
 */

const id = { type: 'string', minLength: 1 } as const;

// ——— documents ———

export interface RenderInvoiceDocumentPayload {
  tenantId: string;
  invoiceId: string;
  kind: DocumentKind;
  version: number;
}

export interface ImportIncomingEinvoicePayload {
  tenantId: string;
  incomingId: string;
}

export interface ImportBankStatementPayload {
  tenantId: string;
  statementId: string;
}

// ——— email ———

/** What the SMTP server said when it accepted a message whose 'sent' could not be written yet. */
export interface AcceptedMail {
  smtpResponse: string;
  messageId: string;
  notice: string | null;
}

export interface SendInvoiceEmailPayload {
  deliveryId: string;
  tenantId: string;
  /**
   * Set by an attempt whose message the SMTP server accepted but whose 'sent' could not be
   * written (the database failed just then): the retry records it instead of sending again.
   */
  accepted?: AcceptedMail;
}

/** A password-reset request (password_resets row); the token is derived from its id (shared/auth/passwordReset.ts). */
export interface SendPasswordResetEmailPayload {
  resetId: string;
}

/** A notice to a user about a change to their account; ref makes each notice its own job. */
export interface SendAccountNoticePayload {
  tenantId: string;
  userId: string;
  notice: AccountNotice;
  ref: string;
}

// ——— tax-portal ———

export interface SubmitU30Payload {
  tenantId: string;
  submissionId: string;
}

// ——— reports ———

export interface U30ReportPdfPayload {
  tenantId: string;
  report: 'u30';
  year: number;
  month?: number;
  quarter?: number;
  fingerprint: string;
}
export interface BwaReportPdfPayload {
  tenantId: string;
  report: 'bwa';
  year: number;
  fingerprint: string;
}
export type ReportPdfPayload = U30ReportPdfPayload | BwaReportPdfPayload;

/** The tax period of a U30 report job (month or quarter). */
export const periodOfJob = (d: { year: number; month?: number; quarter?: number }): TaxPeriod =>
  d.month ? monthPeriod(d.year, d.month) : quarterPeriod(d.year, d.quarter!);

// ——— webhooks ———

export interface ProcessWebhookEventPayload {
  eventRowId: string;
  tenantId: string;
}

// ——— outbound-webhooks ———

export interface DeliverWebhookPayload {
  tenantId: string;
  deliveryId: string;
}

/** The admins' notice that a subscription was disabled; disabledAt (ms) tells one disabling from the next. */
export interface NotifyWebhookDisabledPayload {
  tenantId: string;
  subscriptionId: string;
  disabledAt: number;
}

// ——— maintenance ———

/** Scheduled daily for all tenants (no tenantId), or on demand for one tenant. */
export interface PurgeDeletedCustomersPayload {
  tenantId?: string;
}

/** Scheduled with no data; a run may be narrowed to a tenant or given other ages. */
export interface SweepStuckWebhookEventsPayload {
  tenantId?: string;
  staleAfterMinutes?: number;
  maxAgeHours?: number;
}

/**
 * One tenant's dunning run for one day (docs/dunning.md). The daily fan-out adds it keyed by
 * tenant and day, so many workers (or a repeated fan-out) run it once; an admin's run now carries
 * a runId and is a run of its own (the notices' unique (invoice, level) keeps it harmless).
 */
export interface RunDunningPayload {
  tenantId: string;
  day: string;
  /** A random id per admin request: two requests in the same millisecond are still two runs. */
  runId?: string;
}

/** A recurring-invoice run; empty from its daily scheduler. */
export interface RunRecurringInvoicesPayload {
  /** Only this tenant's templates (an admin's run); absent: every tenant's. */
  tenantId?: string;
  /** YYYY-MM-DD: bill the periods that start on or before it (default: today in Vienna). */
  asOf?: string;
  /** A random id per admin request (two at once are two runs); absent from the scheduler. */
  runId?: string;
}

/** Recurring jobs that take no data (their scheduler adds them with `{}`). */
export type NoPayload = Record<string, never>;
const noPayload = payloadSchema<NoPayload>({ type: 'object', required: [] });

export const jobs = {
  /** Render one document of one invoice version and store it (the API waits for it: runAndWait). */
  renderInvoiceDocument: defineJob<RenderInvoiceDocumentPayload>()({
    queue: QUEUES.documents,
    name: 'render-invoice-document',
    schema: payloadSchema<RenderInvoiceDocumentPayload>({
      type: 'object',
      properties: { tenantId: id, invoiceId: id, kind: { type: 'string', enum: DOCUMENT_KINDS }, version: { type: 'integer' } },
      required: ['tenantId', 'invoiceId', 'kind', 'version'],
    }),
    // One render per (invoice, kind, version), whatever retries.
    jobId: (p) => renderJobId(p.kind, p.invoiceId, p.version),
  }),

  /**
   * Read one uploaded e-invoice and book it as an incoming invoice (docs/e-invoicing-inbound.md).
   * On the documents queue: reading a PDF or a large XML is CPU work, which that queue runs sandboxed.
   */
  importIncomingEinvoice: defineJob<ImportIncomingEinvoicePayload>()({
    queue: QUEUES.documents,
    name: 'import-incoming-einvoice',
    schema: payloadSchema<ImportIncomingEinvoicePayload>({
      type: 'object',
      properties: { tenantId: id, incomingId: id },
      required: ['tenantId', 'incomingId'],
    }),
    // The incoming_einvoices row's id: one import per uploaded file.
    jobId: (p) => `einvoice-import-${p.incomingId}`,
  }),

  /**
   * Read one uploaded bank statement (camt.053, MT940), store its entries once and match them
   * (docs/bank-statements.md). On the documents queue: parsing a 20 MB statement is CPU work,
   * which that queue runs sandboxed, as the e-invoice import.
   */
  importBankStatement: defineJob<ImportBankStatementPayload>()({
    queue: QUEUES.documents,
    name: 'import-bank-statement',
    schema: payloadSchema<ImportBankStatementPayload>({
      type: 'object',
      properties: { tenantId: id, statementId: id },
      required: ['tenantId', 'statementId'],
    }),
    // The bank_statements row's id: one import per uploaded file.
    jobId: (p) => `bank-statement-import-${p.statementId}`,
  }),

  /** Send one invoice e-mail delivery (queued by the send command through the outbox). */
  sendInvoiceEmail: defineJob<SendInvoiceEmailPayload>()({
    queue: QUEUES.email,
    name: 'send-invoice-email',
    schema: payloadSchema<SendInvoiceEmailPayload>({
      type: 'object',
      properties: {
        deliveryId: id,
        tenantId: id,
        accepted: {
          type: 'object',
          properties: {
            smtpResponse: { type: 'string' },
            messageId: { type: 'string' },
            notice: { anyOf: [{ type: 'string' }, { type: 'null', nullable: true }] },
          },
          required: ['smtpResponse', 'messageId', 'notice'],
          nullable: true,
        },
      },
      required: ['deliveryId', 'tenantId'],
    }),
    // The delivery's id: one job per delivery row.
    jobId: (p) => `email-${p.deliveryId}`,
  }),

  /**
   * E-mail the link of one password-reset request, or nothing when the request's e-mail has no
   * active account (docs/auth.md, "Password reset"). A retry sends the same link.
   */
  sendPasswordResetEmail: defineJob<SendPasswordResetEmailPayload>()({
    queue: QUEUES.email,
    name: 'send-password-reset-email',
    schema: payloadSchema<SendPasswordResetEmailPayload>({ type: 'object', properties: { resetId: id }, required: ['resetId'] }),
    jobId: (p) => `password-reset-${p.resetId}`,
  }),

  /** Tell a user that their password was changed, their second factor reset or their account reactivated. */
  sendAccountNotice: defineJob<SendAccountNoticePayload>()({
    queue: QUEUES.email,
    name: 'send-account-notice',
    schema: payloadSchema<SendAccountNoticePayload>({
      type: 'object',
      properties: { tenantId: id, userId: id, notice: { type: 'string', enum: ACCOUNT_NOTICES }, ref: id },
      required: ['tenantId', 'userId', 'notice', 'ref'],
    }),
    jobId: (p) => `account-notice-${p.ref}`,
  }),

  /** Upload one U30 submission to FinanzOnline. */
  submitU30: defineJob<SubmitU30Payload>()({
    queue: QUEUES.taxPortal,
    name: 'submit-u30',
    schema: payloadSchema<SubmitU30Payload>({
      type: 'object',
      properties: { tenantId: id, submissionId: id },
      required: ['tenantId', 'submissionId'],
    }),
    jobId: (p) => `u30-${p.submissionId}`,
  }),

  /** Render a report PDF (U30 form, BWA); the PDF is the job's return value. */
  renderReportPdf: defineJob<ReportPdfPayload>()({
    queue: QUEUES.reports,
    name: 'render-report-pdf',
    schema: oneOfSchemas<U30ReportPdfPayload, BwaReportPdfPayload>(
      {
        type: 'object',
        properties: {
          tenantId: id,
          report: { type: 'string', const: 'u30' },
          year: { type: 'integer' },
          month: { type: 'integer', minimum: 1, maximum: 12, nullable: true },
          quarter: { type: 'integer', minimum: 1, maximum: 4, nullable: true },
          fingerprint: id,
        },
        required: ['tenantId', 'report', 'year', 'fingerprint'],
      },
      {
        type: 'object',
        properties: { tenantId: id, report: { type: 'string', const: 'bwa' }, year: { type: 'integer' }, fingerprint: id },
        required: ['tenantId', 'report', 'year', 'fingerprint'],
      },
    ),
    // The business key plus a fingerprint of the figures: identical requests share a job, a changed book renders anew.
    jobId: (p) => `report-${p.report}-${p.tenantId}-${p.report === 'u30' ? periodOfJob(p).label : String(p.year)}-${p.fingerprint}`,
  }),

  /** Run one stored, verified webhook event through the pipeline. */
  processWebhookEvent: defineJob<ProcessWebhookEventPayload>()({
    queue: QUEUES.webhooks,
    name: 'process-webhook-event',
    schema: payloadSchema<ProcessWebhookEventPayload>({
      type: 'object',
      properties: { eventRowId: id, tenantId: id },
      required: ['eventRowId', 'tenantId'],
    }),
    // The webhook_events row's id (written by the webhook store's SQL too).
    jobId: (p) => `webhook-${p.eventRowId}`,
  }),

  /**
   * Send one outbound webhook delivery (docs/outbound-webhooks.md). Retried with its own backoff
   * (retryDelayMs: exponential, capped, jittered, ending at the 3-day window), which the worker
   * registers under WEBHOOK_BACKOFF_TYPE; the handler fails the delivery at the window's end.
   */
  deliverWebhook: defineJob<DeliverWebhookPayload>()({
    queue: QUEUES.outboundWebhooks,
    name: 'deliver-webhook',
    schema: payloadSchema<DeliverWebhookPayload>({
      type: 'object',
      properties: { tenantId: id, deliveryId: id },
      required: ['tenantId', 'deliveryId'],
    }),
    // The webhook_deliveries row's id: a redelivery is a new row, hence a new job.
    jobId: (p) => `outbound-webhook-${p.deliveryId}`,
    // A bound only: the 3-day window ends the retries first (about 15 attempts at the default base).
    options: { attempts: 40, backoff: { type: WEBHOOK_BACKOFF_TYPE } },
  }),

  /** E-mail a tenant's admins that a webhook subscription was disabled after 3 days of failures. */
  notifyWebhookDisabled: defineJob<NotifyWebhookDisabledPayload>()({
    queue: QUEUES.email,
    name: 'notify-webhook-disabled',
    schema: payloadSchema<NotifyWebhookDisabledPayload>({
      type: 'object',
      properties: { tenantId: id, subscriptionId: id, disabledAt: { type: 'number' } },
      required: ['tenantId', 'subscriptionId', 'disabledAt'],
    }),
    jobId: (p) => `webhook-disabled-${p.subscriptionId}-${p.disabledAt}`,
  }),

  /** Remove customers soft-deleted long ago: daily for all tenants, on demand for one. */
  purgeDeletedCustomers: defineJob<PurgeDeletedCustomersPayload>()({
    queue: QUEUES.maintenance,
    name: 'purge-deleted-customers',
    schema: payloadSchema<PurgeDeletedCustomersPayload>({
      type: 'object',
      properties: { tenantId: { ...id, nullable: true } },
      required: [],
    }),
    // Every on-demand request is a run of its own (hence the time): the purge is idempotent, so
    // two overlapping runs delete each customer once. The daily run's id is its scheduler's.
    jobId: (p) => `purge-customers-${p.tenantId ?? 'all'}-${Date.now()}`,
  }),

  /** Daily: queue one dunning run per tenant with automatic dunning (docs/dunning.md). */
  dunningDaily: defineJob<NoPayload>()({ queue: QUEUES.maintenance, name: 'dunning-daily', schema: noPayload }),

  /** Issue the due dunning notices of one tenant on one day and queue their e-mails. */
  runDunning: defineJob<RunDunningPayload>()({
    queue: QUEUES.maintenance,
    name: 'run-dunning',
    schema: payloadSchema<RunDunningPayload>({
      type: 'object',
      properties: { tenantId: id, day: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }, runId: { type: 'string', maxLength: 64, nullable: true } },
      required: ['tenantId', 'day'],
    }),
    jobId: (p) => `dunning-${p.tenantId}-${p.day}${p.runId ? `-now-${p.runId}` : ''}`,
  }),

  /** Drain outbox rows not relayed right after commit (every 10 s). */
  relayOutbox: defineJob<NoPayload>()({ queue: QUEUES.maintenance, name: 'relay-outbox', schema: noPayload }),

  /** Remove idempotency keys past their 24 h (hourly). */
  purgeIdempotencyKeys: defineJob<NoPayload>()({ queue: QUEUES.maintenance, name: 'purge-idempotency-keys', schema: noPayload }),

  /** Re-run webhook events whose job was lost, give up those pending too long (every 5 min). */
  sweepStuckWebhookEvents: defineJob<SweepStuckWebhookEventsPayload>()({
    queue: QUEUES.maintenance,
    name: 'sweep-stuck-webhook-events',
    schema: payloadSchema<SweepStuckWebhookEventsPayload>({
      type: 'object',
      properties: {
        tenantId: { ...id, nullable: true },
        staleAfterMinutes: { type: 'number', nullable: true },
        maxAgeHours: { type: 'number', nullable: true },
      },
      required: [],
    }),
  }),

  /** Remove lockout rows of unknown e-mails (hourly). */
  purgeUnknownLoginAttempts: defineJob<NoPayload>()({ queue: QUEUES.maintenance, name: 'purge-unknown-login-attempts', schema: noPayload }),

  /** Remove outbound webhook events past their 30 days, with their deliveries (daily). */
  purgeWebhookEvents: defineJob<NoPayload>()({ queue: QUEUES.maintenance, name: 'purge-webhook-events', schema: noPayload }),

  /** Remove outbox rows sent more than a week ago (daily). */
  purgeSentOutbox: defineJob<NoPayload>()({ queue: QUEUES.maintenance, name: 'purge-sent-outbox', schema: noPayload }),

  /**
   * Fetch the ECB euro reference rates and store them (docs/exchange-rates.md): weekdays after the
   * ECB publishes, and once when a worker starts with none stored. That start-up run's id is the
   * day's, so several workers starting together fetch once; the daily run's id is its scheduler's.
   */
  fetchEcbRates: defineJob<NoPayload>()({
    queue: QUEUES.maintenance,
    name: 'fetch-ecb-rates',
    schema: noPayload,
    jobId: () => `ecb-rates-${new Date().toISOString().slice(0, 10)}`,
  }),

  /**
   * Bill every recurring invoice period due on asOf (docs/recurring-invoices.md): daily from its
   * scheduler with `{}` (asOf = the worker's today), or at once by POST /api/recurring-invoices/run
   * with the API's today. Each request is a run of its own; the periods' primary key (template,
   * period start) and the template lock make overlapping runs bill each period once.
   */
  runRecurringInvoices: defineJob<RunRecurringInvoicesPayload>()({
    queue: QUEUES.maintenance,
    name: 'run-recurring-invoices',
    schema: payloadSchema<RunRecurringInvoicesPayload>({
      type: 'object',
      properties: {
        tenantId: { ...id, nullable: true },
        asOf: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', nullable: true },
        runId: { type: 'string', maxLength: 64, nullable: true },
      },
      required: [],
    }),
    jobId: (p) => `recurring-invoices-${p.tenantId ?? 'all'}-${p.asOf ?? 'today'}-${p.runId ?? 'scheduled'}`,
  }),
} as const;

export type Jobs = typeof jobs;
export type JobKey = keyof Jobs;
export type JobPayload<K extends JobKey> = PayloadOf<Jobs[K]>;

/** The catalog's entries with their keys. */
export const catalogEntries = Object.entries(jobs) as [JobKey, AnyJobDefinition][];

const byQueueAndName = new Map<string, { key: JobKey; def: AnyJobDefinition }>();
for (const [key, def] of catalogEntries) {
  const k = `${def.queue}\u0000${def.name}`;
  if (byQueueAndName.has(k)) throw new Error(`Job "${def.name}" is declared twice on queue "${def.queue}"`);
  byQueueAndName.set(k, { key, def });
}

/** The catalog entry of a job by queue and name (what Redis and the outbox rows hold), if any. */
export function findJob(queue: QueueName | string, name: string): { key: JobKey; def: AnyJobDefinition } | undefined {
  return byQueueAndName.get(`${queue}\u0000${name}`);
}
