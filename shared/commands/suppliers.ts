import { audit } from '../audit';
import { dependency, invalidInput, notFound, type ErrorDetail } from '../errors';
import { vatIdCountry } from '../domain/vatId';
import { isValidIban, normalizeIban } from '../domain/iban';
import { toSupplierView, type SupplierView } from '../queries/suppliers';
import type { CommandContext } from './types';
import { cleanPartyFields } from './partyFields';
import { Supplier } from '../models/Supplier';

/** Providers whose merchant ids the webhook pipeline matches suppliers on. */
export const MERCHANT_PROVIDERS = ['stripe', 'paypal', 'mollie', 'bank'] as const;

export interface SupplierInput {
  name?: string;
  email?: string | null;
  vatId?: string | null;
  address?: string | null;
  iban?: string | null;
  country?: string | null;
  merchantIds?: Partial<Record<(typeof MERCHANT_PROVIDERS)[number], string>> | null;
}

const FIELDS: (keyof SupplierInput)[] = ['name', 'email', 'vatId', 'address', 'iban', 'country', 'merchantIds'];

function clean(input: SupplierInput): Partial<Supplier> {
  const details: ErrorDetail[] = [];
  const out: Partial<Supplier> = cleanPartyFields(input, FIELDS, details);
  if (typeof out.iban === 'string') {
    if (!isValidIban(out.iban)) details.push({ field: 'iban', message: 'must be a valid IBAN' });
    else out.iban = normalizeIban(out.iban);
  }
  if ('merchantIds' in out) {
    const m = (out.merchantIds ?? {}) as Record<string, string>;
    for (const k of Object.keys(m)) {
      if (!(MERCHANT_PROVIDERS as readonly string[]).includes(k))
        details.push({ field: `merchantIds.${k}`, message: `provider must be one of: ${MERCHANT_PROVIDERS.join(', ')}` });
    }
    out.merchantIds = m;
  }
  if (details.length) throw invalidInput('Supplier failed validation', details);
  if (typeof out.vatId === 'string' && !out.country && !input.country) out.country = vatIdCountry(out.vatId);
  return out;
}

export async function createSupplier({ trx, actor }: CommandContext, input: SupplierInput): Promise<SupplierView> {
  if (!input.name) throw invalidInput('Supplier failed validation', [{ field: 'name', message: 'is required' }]);
  const row = await Supplier.query(trx)
    .insert({ ...clean(input), tenantId: actor.tenantId })
    .returning('*');
  await audit(trx, actor, { action: 'supplier.created', entityType: 'supplier', entityId: row.id });
  return toSupplierView(row);
}

/** Partial update: present fields replace stored ones; merchantIds is replaced as a whole. */
export async function updateSupplier({ trx, actor }: CommandContext, id: string, input: SupplierInput): Promise<SupplierView> {
  const existing = await Supplier.query(trx).where({ tenantId: actor.tenantId, id }).whereNull('deletedAt').forUpdate().first();
  if (!existing) throw notFound('Supplier');
  const values = clean(input);
  const [row] = await Supplier.query(trx)
    .where({ tenantId: actor.tenantId, id })
    .patch({ ...values, updatedAt: trx.fn.now() })
    .returning('*');
  await audit(trx, actor, { action: 'supplier.updated', entityType: 'supplier', entityId: id, data: { fields: Object.keys(values) } });
  return toSupplierView(row);
}

/** Soft delete; a supplier with open incoming invoices stays (400 DEPENDENCY), like customers. */
export async function deleteSupplier({ trx, actor }: CommandContext, id: string): Promise<void> {
  const existing = await Supplier.query(trx).where({ tenantId: actor.tenantId, id }).whereNull('deletedAt').forUpdate().first();
  if (!existing) throw notFound('Supplier');
  const [{ count }] = await trx('invoices')
    .where({ tenantId: actor.tenantId, supplierId: id })
    .whereIn('status', ['offen', 'teilbezahlt'])
    .whereNull('deletedAt')
    .count<{ count: number }[]>({ count: '*' });
  if (Number(count) > 0) throw dependency(`Supplier has ${count} open or partially paid incoming invoice(s)`);
  await Supplier.query(trx).where({ tenantId: actor.tenantId, id }).patch({ deletedAt: trx.fn.now(), updatedAt: trx.fn.now() });
  await audit(trx, actor, { action: 'supplier.deleted', entityType: 'supplier', entityId: id });
}
