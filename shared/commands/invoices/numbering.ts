import type { Knex } from 'knex';
import { AppError } from '../../errors';
import { formatInvoiceNumber, NUMBERED_TYPES } from '../../domain/numbering';
import type { InvoiceType } from '../../domain/invoiceView';
import { Invoice } from '../../models/Invoice';
import { Tenant } from '../../models/Tenant';

/**
 * Next gapless number for (tenant, type, year): an atomic upsert on the sequence row inside the
 * finalizing transaction. The row lock it takes serializes concurrent finalizations of the same
 * series, and a rollback returns the number, so the series has no gaps.
 */
export async function nextInvoiceNumber(trx: Knex.Transaction, tenantId: string, type: InvoiceType, year: number, month = 1): Promise<string> {
  // Hand-written: an upsert that increments in place has no model form.
  const res = await trx.raw(
    `insert into invoice_number_sequences (tenant_id, type, year, last_value) values (?, ?, ?, 1)
     on conflict (tenant_id, type, year) do update set last_value = invoice_number_sequences.last_value + 1
     returning last_value`,
    [tenantId, type, year],
  );
  const row = res.rows[0] as { lastValue?: number; last_value?: number };
  const tenant = await Tenant.query(trx).findById(tenantId).select('settings');
  const formats: Partial<Record<InvoiceType, string>> = tenant?.settings?.numberFormats ?? {};
  const number = formatInvoiceNumber(type, year, Number(row.lastValue ?? row.last_value), formats[type], month);
  // Numbers are unique across types (§ 11 UStG AT, § 14 UStG DE). The settings refuse formats of
  // two types that can meet, but not a new format meeting a number an old one already issued
  // (gutschrift switched to RE-{YYYY}-{NNNNN}); the unique index is per type. Refused here, the
  // counter increment rolls back with the send: the series stays gapless.
  const others = NUMBERED_TYPES.filter((t) => t !== type);
  const taken = await Invoice.query(trx).where({ tenantId, number }).whereIn('type', others).select('type').first();
  if (taken) {
    throw new AppError(
      'DUPLICATE',
      409,
      `The number ${number} is already on a document of type ${taken.type}: change the number format of ${type} in the settings`,
      [{ field: `numberFormats.${type}`, message: `gives ${number}, which a ${taken.type} already has` }],
    );
  }
  return number;
}
