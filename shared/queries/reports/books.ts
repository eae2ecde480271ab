/**
 * What is "in the books" for the reports (U30/UStVA/ELSTER, DATEV, BWA and their currency check).
 * Every report query takes its documents through these fragments, so the rule lives here once.
 *
 * 1. A soft delete hides a document from the user's lists; it does not take it out of the books.
 *    A finalized document (finalized_at set: a sent sales invoice or credit note, an incoming
 *    invoice) stays in the books for good (BAO § 132, GoBD: records are kept, not erased). Deleting
 *    a cancelled invoice (allowed, spec rule 3) must not drop it from the VAT return while its
 *    Storno credit note stays: that would reverse turnover that was never declared.
 *    Drafts were never in the books: they have no finalized_at, and every report selects
 *    finalized statuses anyway. `deleted_at is null` stays in the OR so a row that is not deleted
 *    counts exactly as before whatever its finalized_at.
 * 2. A cancelled (storniert) incoming invoice is void: it was entered wrongly (e.g. a webhook
 *    payment in a foreign currency) and the user enters the correct EUR document and its payment
 *    instead. Its payment records are not money movements of the books either. A cancelled sales
 *    invoice is different: its credit note reverses it, and the money received on it is real.
 *
 * Index note: the sales queries use (tenant_id, type, issue_date), which has no predicate; the
 * incoming-invoice index (tenant_id, invoice_date) is partial on type only
 * (migration 20261126110000), so it serves these predicates.
 */

/** SQL: the invoice aliased `alias` is in the books (not soft-deleted, or finalized). */
export const inBooksSql = (alias = 'i') => `(${alias}.deleted_at is null or ${alias}.finalized_at is not null)`;

/**
 * SQL: the payments recorded on invoice `alias` are money movements of the books: the invoice is
 * in the books and is not a void (cancelled) incoming invoice.
 */
export const paymentsInBooksSql = (alias = 'i') => `${inBooksSql(alias)} and not (${alias}.type = 'eingangsrechnung' and ${alias}.status = 'storniert')`;
