/** The event cannot become an invoice however often it is retried (→ log row failed). */
export class PermanentPipelineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentPipelineError';
  }
}

/** Transient by design: the job throws it so BullMQ retries with backoff (ordering of related events). */
export class RetryLaterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RetryLaterError';
  }
}

/** The unique (tenant_id, source, external_id) index refused the insert: the money movement is booked already. */
export class DuplicateInvoiceError extends Error {
  constructor(
    public readonly source: string,
    public readonly externalId: string,
  ) {
    super(`incoming invoice ${source}/${externalId} exists`);
    this.name = 'DuplicateInvoiceError';
  }
}
