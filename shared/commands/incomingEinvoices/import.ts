import { audit } from '../../audit';
import { AppError } from '../../errors';
import { dec, fmtMoney } from '../../domain/money';
import { isValidVatId, normalizeVatId } from '../../domain/vatId';
import { isValidIban } from '../../domain/iban';
import type { InboundInvoice, InboundResult } from '../../formats/inbound/types';
import { IncomingEinvoice, type IncomingProblem } from '../../models/IncomingEinvoice';
import { existingIncomingInvoice, matchSupplier } from '../../queries/incomingEinvoices';
import { createInvoice, type ReceivedEinvoiceOptions } from '../createInvoice';
import { Tenant } from '../../models/Tenant';
import { createSupplier, type SupplierInput } from '../suppliers';
import type { CommandContext } from '../types';
import { type MappedInvoice, toInvoiceInput, UnmappableInvoice } from './toInvoiceInput';
import { validationReport } from '../../formats/inbound/validate';
import { autoPostImported } from './autoPost';

/**
 * The import job's transitions (docs/e-invoicing-inbound.md, "Inbound API"):
 *   queued ──claim──▶ processing ──importReadInvoice──▶ imported | duplicate
 *   queued | processing ──rejectIncomingEinvoice──▶ rejected
 * Each names the states it may leave, so a second run of the job never undoes a final state.
 */

const OPEN = ['queued', 'processing'] as const;

/** queued → processing; true when the row is (still) open, so a retried job after a crash continues. */
export async function claimIncomingEinvoice({ trx, actor }: CommandContext, id: string): Promise<boolean> {
  const rows = await IncomingEinvoice.query(trx)
    .where({ tenantId: actor.tenantId, id })
    .whereIn('status', OPEN)
    .patch({ status: 'processing' })
    .returning('id');
  return (rows as unknown as unknown[]).length > 0;
}

export async function rejectIncomingEinvoice(
  { trx, actor }: CommandContext,
  id: string,
  outcome: { errors: IncomingProblem[]; warnings?: string[]; read?: Extract<InboundResult, { ok: true }> },
): Promise<boolean> {
  const rows = await IncomingEinvoice.query(trx)
    .where({ tenantId: actor.tenantId, id })
    .whereIn('status', OPEN)
    .patch({
      status: 'rejected',
      errors: outcome.errors,
      warnings: outcome.warnings ?? [],
      valid: false,
      ...(outcome.read ? { format: outcome.read.format, syntax: outcome.read.syntax, profile: outcome.read.profile } : {}),
      processedAt: trx.fn.now() as never,
    })
    .returning('id');
  if (!(rows as unknown as unknown[]).length) return false;
  await audit(trx, actor, {
    action: 'incoming_einvoice.rejected',
    entityType: 'incoming_einvoice',
    entityId: id,
    data: { errors: outcome.errors.slice(0, 5) },
  });
  return true;
}

/** Why an import is rejected rather than retried: the document, not the moment, is the problem. */
export class ImportRefused extends Error {
  constructor(readonly problems: IncomingProblem[]) {
    super(problems.map((p) => `${p.rule}: ${p.message}`).join('; '));
  }
}

function supplierInput(invoice: InboundInvoice): SupplierInput {
  const s = invoice.seller;
  const address = [...s.address.lines, [s.address.postcode, s.address.city].filter(Boolean).join(' ')].filter((l) => l?.trim()).join('\n');
  // A VAT ID or IBAN our checks refuse is left out rather than refusing the supplier: the
  // invoice is still the supplier's, and the document keeps the value as written.
  const vatId = s.vatId && isValidVatId(s.vatId) ? normalizeVatId(s.vatId) : null;
  return {
    name: s.name!.trim(),
    vatId,
    iban: s.iban && isValidIban(s.iban) ? s.iban : null,
    email: s.email && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s.email) ? s.email : null,
    address: address || null,
    country: s.address.country && /^[A-Za-z]{2}$/.test(s.address.country) ? s.address.country : null,
  };
}

/**
 * What createInvoice is asked beyond the input for an e-invoice (docs/e-invoicing-inbound.md):
 * foreign VAT lines, the stated VAT per rate, booking without an ECB rate, and a credit note's
 * link to the supplier's invoice it names (BT-25) when that is booked here.
 */
async function bookingOptions(trx: CommandContext['trx'], tenantId: string, supplierId: string, invoice: InboundInvoice, mapped: MappedInvoice) {
  const warnings: string[] = [];
  let relatedInvoiceId: string | null = null;
  const preceding = invoice.precedingInvoiceNumber?.trim();
  if (invoice.kind === 'creditNote' && preceding) {
    relatedInvoiceId = await existingIncomingInvoice(trx, tenantId, supplierId, preceding);
    if (!relatedInvoiceId) {
      warnings.push(`the credit note corrects invoice ${preceding} of this supplier, which is not booked here: the reference is kept in the notes, not linked`);
    }
  }
  const options: ReceivedEinvoiceOptions = {
    foreignVat: mapped.foreignVat.rates.length > 0,
    statedTax: mapped.statedTax,
    withoutEcbRate: true,
    relatedInvoiceId,
  };
  return { options, warnings };
}

/** The warnings of what the booking did differently from an invoice typed in. */
function bookedWarnings(invoice: InboundInvoice, mapped: MappedInvoice, created: Awaited<ReturnType<typeof createInvoice>>): string[] {
  const out: string[] = [];
  for (const d of created.statedTaxApplied) {
    out.push(
      `VAT at ${d.taxRate} % booked as the document states it (BT-117 ${d.stated}); computed on its basis it is ${d.computed}, a difference of ${d.difference} (BR-CO-17 allows less than 1.00)`,
    );
  }
  if (mapped.foreignVat.rates.length) {
    const from = mapped.foreignVat.sellerCountry ? ` from a supplier in ${mapped.foreignVat.sellerCountry}` : '';
    out.push(
      `foreign VAT${from} at ${mapped.foreignVat.rates.map((r) => `${r} %`).join(', ')} booked as foreignVat: it is not input tax of the UStVA/U30 and counts as expense; ` +
        'claim it through the refund procedure of that country (DE: Vorsteuer-Vergütungsverfahren, § 18 Abs. 9 UStG; AT: Erstattungsverfahren, § 21 Abs. 9 UStG 1994; EU: Directive 2008/9/EC)',
    );
  }
  const v = created.view;
  if (v.currency !== 'EUR' && !v.exchangeRate) {
    out.push(
      `no ECB rate for ${v.currency} on ${invoice.issueDate}: enter the invoice's exchangeRate (PUT /api/invoices/${created.id}) before the VAT return of that period; until then the reports of that period answer 422 FOREIGN_CURRENCY`,
    );
  }
  return out;
}

const stated = (v: string | null, negate: boolean) => (v == null ? null : fmtMoney(negate ? dec(v).negated() : dec(v)));

/**
 * In the caller's one transaction: the duplicate check (same supplier and number), the supplier
 * (matched or created from the seller party), the incoming invoice through createInvoice, its
 * totals compared with BT-109/110/112 to the cent, and the row marked imported. Throws
 * ImportRefused (the caller rolls back and rejects) for a document that cannot be booked.
 */
export async function importReadInvoice(
  { trx, actor }: CommandContext,
  id: string,
  read: Extract<InboundResult, { ok: true }>,
  reconcileProblems: IncomingProblem[],
): Promise<{ status: 'imported' | 'duplicate' | 'skipped'; invoiceId: string | null }> {
  const tenantId = actor.tenantId;
  const row = await IncomingEinvoice.query(trx).select('id', 'status', 'supplierIdHint').where({ tenantId, id }).forUpdate().first();
  if (!row || !(OPEN as readonly string[]).includes(row.status)) return { status: 'skipped', invoiceId: null };
  // Imports of one tenant book one at a time: two files of one invoice, or two invoices of one
  // new supplier, imported at once would otherwise both miss the other's invoice or supplier.
  await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`incoming-einvoice-import:${tenantId}`]);
  const invoice = read.invoice;
  // The validation report (docs/e-invoicing-inbound.md): fatal rule findings make the row
  // valid: false with their rule ids, but a document that reconciles is imported all the same.
  const report = validationReport(read, reconcileProblems);
  const base = { format: read.format, syntax: read.syntax, profile: read.profile, warnings: report.warnings, processedAt: trx.fn.now() as never };

  let supplierId = await matchSupplier(trx, tenantId, invoice.seller, row.supplierIdHint);
  if (supplierId) {
    const existing = await existingIncomingInvoice(trx, tenantId, supplierId, invoice.number);
    if (existing) {
      await IncomingEinvoice.query(trx)
        .where({ tenantId, id })
        .patch({ ...base, status: 'duplicate', invoiceId: existing, errors: report.errors, valid: report.valid });
      return { status: 'duplicate', invoiceId: existing };
    }
  } else {
    if (!invoice.seller.name?.trim()) throw new ImportRefused([{ rule: 'BT-27', message: 'the seller has no name: no supplier can be matched or created' }]);
    supplierId = (await createSupplier({ trx, actor }, supplierInput(invoice))).id;
  }

  const tenant = await Tenant.query(trx).findById(tenantId).select('country', 'currency', 'settings');
  let mapped: ReturnType<typeof toInvoiceInput>;
  try {
    mapped = toInvoiceInput(invoice, supplierId, tenant?.country ?? 'AT');
  } catch (err) {
    if (err instanceof UnmappableInvoice) throw new ImportRefused([{ rule: err.rule, message: err.message }]);
    throw err;
  }
  const booking = await bookingOptions(trx, tenantId, supplierId, invoice, mapped);
  let created: Awaited<ReturnType<typeof createInvoice>>;
  try {
    const allowNegative = mapped.negate || dec(invoice.totals.gross ?? '0').isNegative();
    created = await createInvoice({ trx, actor }, mapped.input, { allowNegative, einvoice: booking.options });
  } catch (err) {
    // The document's content our invoice rules refuse (a stated VAT beyond BR-CO-17's tolerance, a
    // foreign rate out of range): a retry would refuse it again.
    if (err instanceof AppError && err.status >= 400 && err.status < 500) {
      const details = err.details?.length
        ? err.details.map((d) =>
            d.field.startsWith('statedTax.') ? { rule: 'BR-CO-17', message: d.message } : { rule: 'INVOICE', message: `${d.field}: ${d.message}` },
          )
        : [{ rule: 'INVOICE', message: err.message }];
      throw new ImportRefused(details);
    }
    throw err;
  }
  base.warnings = [...base.warnings, ...booking.warnings, ...bookedWarnings(invoice, mapped, created)];

  const v = created.view;
  const differences: IncomingProblem[] = [];
  for (const [term, ours, theirs] of [
    ['BT-109', v.totalNet, stated(invoice.totals.net, mapped.negate)],
    ['BT-110', v.totalTax, stated(invoice.totals.tax, mapped.negate)],
    ['BT-112', v.totalGross, stated(invoice.totals.gross, mapped.negate)],
  ] as const) {
    if (theirs != null && !dec(ours).equals(dec(theirs))) {
      differences.push({
        rule: 'TOTALS',
        message: `${term}: the document states ${theirs}, the booked invoice computes ${ours} (difference ${fmtMoney(dec(ours).minus(dec(theirs)))})`,
      });
    }
  }
  if (differences.length) throw new ImportRefused(differences);

  // Input tax counts in the U30/UStVA from the booked invoice; the ledger gets it when auto-post is on.
  const posted = await autoPostImported({ trx, actor }, tenant?.settings?.einvoiceImport, tenant?.currency ?? 'EUR', {
    id: created.id,
    supplierId,
    invoiceNumber: invoice.number,
    invoiceDate: invoice.issueDate,
    totalGross: v.totalGross,
    currency: v.currency,
    exchangeRate: v.exchangeRate?.rate ?? null,
    relatedInvoiceId: booking.options.relatedInvoiceId ?? null,
  });
  if (posted.warning) base.warnings = [...base.warnings, posted.warning];

  await IncomingEinvoice.query(trx)
    .where({ tenantId, id })
    .patch({ ...base, status: 'imported', invoiceId: created.id, errors: report.errors, valid: report.valid });
  await audit(trx, actor, { action: 'incoming_einvoice.imported', entityType: 'incoming_einvoice', entityId: id, data: { invoiceId: created.id, supplierId } });
  return { status: 'imported', invoiceId: created.id };
}
