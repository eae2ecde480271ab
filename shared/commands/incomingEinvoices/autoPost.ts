import { toEur } from '../../domain/exchangeRates';
import { dec } from '../../domain/money';
import { postIncomingInvoice, postRefund, PostingError, type PostedEntry } from '../../ledger/posting';
import type { EinvoiceImportSettings } from '../../models/Tenant';
import type { CommandContext } from '../types';

export interface ImportedToPost {
  id: string;
  supplierId: string;
  invoiceNumber: string;
  invoiceDate: string;
  /** In the document's currency; negative for a credit note. */
  totalGross: string;
  currency: string;
  exchangeRate: string | null;
  /** The invoice a credit note corrects, when it is booked here. */
  relatedInvoiceId: string | null;
}

/**
 * Post an imported e-invoice when the tenant's `einvoiceImport.autoPost` says so (docs/ledger.md,
 * "Imported e-invoices"), in the import's transaction: through the webhook's posting path with
 * payables as the credit, since an e-invoice arrives unpaid. A credit note reverses like a
 * webhook refund. What cannot be posted (another currency without a rate, an account the chart
 * lacks) leaves the invoice booked and returns the warning for the import row; posting throws
 * PostingError only before it writes, so no savepoint is needed (as in the webhook's autoPost).
 */
export async function autoPostImported(
  { trx, actor }: CommandContext,
  settings: EinvoiceImportSettings | undefined,
  ledgerCurrency: string,
  inv: ImportedToPost,
): Promise<{ entry: PostedEntry | null; warning: string | null }> {
  if (!settings?.autoPost) return { entry: null, warning: null };
  let totalGross = inv.totalGross;
  let exchangeRate: string | null = null;
  if (inv.currency !== ledgerCurrency) {
    if (ledgerCurrency !== 'EUR' || !inv.exchangeRate) {
      return {
        entry: null,
        warning: `auto-post skipped: ${inv.currency} differs from the ledger currency ${ledgerCurrency} and the invoice has no exchange rate: post it manually`,
      };
    }
    exchangeRate = inv.exchangeRate;
    totalGross = toEur(totalGross, exchangeRate);
  }
  const toPost = {
    id: inv.id,
    tenantId: actor.tenantId,
    supplierId: inv.supplierId,
    invoiceDate: inv.invoiceDate,
    totalGross,
    invoiceNumber: inv.invoiceNumber,
    relatedInvoiceId: inv.relatedInvoiceId,
    exchangeRate,
  };
  const supplier = await trx('suppliers').where({ tenantId: actor.tenantId, id: inv.supplierId }).first('name');
  const description = `E-Rechnung ${inv.invoiceNumber} – ${supplier?.name ?? ''}`;
  const postingSettings = { expenseAccount: settings.expenseAccount ?? null, clearingAccount: null };
  try {
    const entry = dec(totalGross).isNegative()
      ? await postRefund(trx, toPost, 'payables', postingSettings, description)
      : await postIncomingInvoice(trx, toPost, 'payables', postingSettings, description);
    return { entry, warning: null };
  } catch (err) {
    if (!(err instanceof PostingError)) throw err;
    return { entry: null, warning: `auto-post failed: ${err.message}` };
  }
}
