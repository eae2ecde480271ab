/**
 * What is "in the books" for every report query (U30/UStVA/ELSTER, DATEV, BWA, currency check),
 * so the rule lives once. A soft delete hides a document from lists, but a finalized one stays
 * in the books for good (BAO § 132, GoBD): deleting a cancelled invoice must not drop it while its
 * Storno credit note stays. A cancelled incoming invoice is void, its payments too; a cancelled
 * sales invoice's money is real (docs/reports.md, "What counts, and by which date" and "Currency").
 */

/** SQL: the invoice aliased `alias` is in the books (not soft-deleted, or finalized). */
export const inBooksSql = (alias = 'i') => `(${alias}.deleted_at is null or ${alias}.finalized_at is not null)`;

/**
 * SQL: the payments recorded on invoice `alias` are money movements of the books: the invoice is
 * in the books and is not a void (cancelled) incoming invoice.
 */
export const paymentsInBooksSql = (alias = 'i') => `${inBooksSql(alias)} and not (${alias}.type = 'eingangsrechnung' and ${alias}.status = 'storniert')`;
