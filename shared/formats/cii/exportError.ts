/**
 * The one error every e-invoice writer throws when an invoice cannot (or must not) be exported.
 * Its own module so the model, the VAT category rules and the writers can share it without cycles.
 */
/** Thrown when an invoice cannot (or must not) be exported as an e-invoice. */
export class EInvoiceExportError extends Error {
  constructor(
    message: string,
    /** EN 16931 / ebInterface rule violations, when the refusal comes from a rule check. */
    public readonly violations: ReadonlyArray<{ rule: string; message: string }> = [],
  ) {
    super(message);
    this.name = 'EInvoiceExportError';
  }
}
