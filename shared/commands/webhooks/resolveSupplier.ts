import type { Knex } from 'knex';
import { runCompiled, runCompiledSql } from '../../db';
import { audit } from '../../audit';
import { systemActor } from '../../actor';
import { isValidIban, normalizeIban } from '../../domain/iban';
import { isValidVatId, normalizeVatId } from '../../domain/vatId';
import type { Counterparty, ProviderSlug } from '../../providers/payments/types';
import { lockKey, supplierLockKey } from '../../locks';
import { Supplier } from '../../models/Supplier';

export interface SupplierResolution {
  supplierId: string;
  name: string;
  how: 'default' | 'merchantId' | 'email' | 'created' | 'placeholder' | 'original';
}

/** How suppliers and journal entries name a provider. */
export const PROVIDER_LABEL: Record<ProviderSlug, string> = { stripe: 'Stripe', paypal: 'PayPal', mollie: 'Mollie', bank: 'Bank' };

const active = (trx: Knex.Transaction, tenantId: string) => trx('suppliers').where({ tenantId }).whereNull('deletedAt');

const SUPPLIER_BY_MERCHANT_ID = `select s.id, s.name
    from supplier_merchant_ids m
    cross join lateral (select id, name, tenant_id, created_at, deleted_at from suppliers where id = m.supplier_id offset 0) s
   where m.tenant_id = ? and m.provider = ? and m.merchant_id = ? and s.tenant_id = m.tenant_id and s.deleted_at is null
   order by s.created_at
   limit 1`;

/**
 * What prefetchSuppliers found for a transaction's events, by matchKey: a supplier, or null for
 * none. Valid until the transaction creates a supplier (the caller of createSupplierFor clears
 * it first, forgetPrefetchedSuppliers): a supplier another transaction creates meanwhile is found
 * by createSupplierFor's second match, which never uses it.
 */
const prefetchedByTrx = new WeakMap<Knex.Transaction, Map<string, { id: string; name: string } | null>>();
const matchKey = (kind: 'm' | 'e', tenantId: string, provider: ProviderSlug, value: string) =>
  kind === 'm' ? `m:${tenantId}:${provider}:${value}` : `e:${tenantId}:${value.toLowerCase()}`;

/** A counterparty's identities in the order match() tries them: merchant id, then e-mail. */
interface Identity {
  kind: 'm' | 'e';
  value: string;
  how: 'merchantId' | 'email';
}
const identitiesOf = (cp: Counterparty): Identity[] => [
  ...(cp.merchantId ? [{ kind: 'm' as const, value: cp.merchantId, how: 'merchantId' as const }] : []),
  ...(cp.email ? [{ kind: 'e' as const, value: cp.email, how: 'email' as const }] : []),
];

/**
 * The merchant-id and e-mail matches of many counterparties at once (a batch of events, one
 * statement instead of up to two per event), for findSupplier to use instead of its queries. The
 * same lookups as match(), each per counterparty: the oldest active supplier with the merchant id,
 * and the oldest active one with the e-mail (case-insensitive).
 */
export async function prefetchSuppliers(
  trx: Knex.Transaction,
  wanted: readonly { tenantId: string; provider: ProviderSlug; counterparty: Counterparty | null | undefined }[],
): Promise<void> {
  const keys = new Map<string, { kind: 'm' | 'e'; tenant_id: string; provider: string; value: string }>();
  for (const w of wanted) {
    for (const { kind, value } of identitiesOf(w.counterparty ?? {})) {
      keys.set(matchKey(kind, w.tenantId, w.provider, value), { kind, tenant_id: w.tenantId, provider: w.provider, value });
    }
  }
  if (!keys.size) return;
  const found = await runCompiledSql<{ kind: 'm' | 'e'; tenantId: string; provider: ProviderSlug; value: string; id: string | null; name: string | null }>(
    trx,
    SUPPLIERS_PREFETCH,
    [JSON.stringify([...keys.values()])],
  );
  const cache = new Map<string, { id: string; name: string } | null>();
  for (const f of found) cache.set(matchKey(f.kind, f.tenantId, f.provider, f.value), f.id && f.name !== null ? { id: f.id, name: f.name } : null);
  prefetchedByTrx.set(trx, cache);
}

/** Before creating a supplier in trx (or a savepoint of it): what was not found may be found afterwards. */
export const forgetPrefetchedSuppliers = (trx: Knex.Transaction): void => {
  prefetchedByTrx.delete(trx);
};

/** prefetchSuppliers' statement: per wanted key one row, its supplier's id and name or nulls. Both lookups as match() runs them alone. */
const SUPPLIERS_PREFETCH = `select w.kind, w.tenant_id as "tenantId", w.provider, w.value, s.id, s.name
    from jsonb_to_recordset(cast(? as jsonb)) as w(kind text, tenant_id uuid, provider text, value text)
    left join lateral (
      select s.id, s.name, s.created_at
        from supplier_merchant_ids m
        cross join lateral (select id, name, tenant_id, created_at, deleted_at from suppliers where id = m.supplier_id offset 0) s
       where w.kind = 'm' and m.tenant_id = w.tenant_id and m.provider = w.provider and m.merchant_id = w.value
         and s.tenant_id = m.tenant_id and s.deleted_at is null
      union all
      select id, name, created_at from suppliers
       where w.kind = 'e' and tenant_id = w.tenant_id and deleted_at is null and lower(email) = lower(w.value)
      order by created_at
      limit 1
    ) s on true`;

async function match(
  trx: Knex.Transaction,
  tenantId: string,
  provider: ProviderSlug,
  cp: Counterparty,
  prefetched?: Map<string, { id: string; name: string } | null>,
): Promise<SupplierResolution | null> {
  for (const identity of identitiesOf(cp)) {
    const key = matchKey(identity.kind, tenantId, provider, identity.value);
    const s = prefetched?.has(key) ? prefetched.get(key) : await lookUp(trx, tenantId, provider, identity);
    if (s) return { supplierId: s.id, name: s.name, how: identity.how };
  }
  return null;
}

/** One identity's supplier by a statement of its own: the oldest active one (SUPPLIERS_PREFETCH does the same for many). */
async function lookUp(trx: Knex.Transaction, tenantId: string, provider: ProviderSlug, { kind, value }: Identity) {
  // supplier_merchant_ids mirrors suppliers.merchant_ids by key (migration 20261125140000); each
  // supplier is then read by its primary key alone (`offset 0`), so the plan stays a key lookup
  // whatever the tables' statistics.
  const [s] =
    kind === 'm'
      ? await runCompiledSql<{ id: string; name: string }>(trx, SUPPLIER_BY_MERCHANT_ID, [tenantId, provider, value])
      : await runCompiled<{ id: string; name: string }>(trx, 'supplier-by-email', [tenantId, value], (tenant, email) =>
          active(trx, tenant).whereRaw('lower(email) = lower(?)', [email]).orderBy('createdAt').first('id', 'name'),
        );
  return s;
}

/**
 * Pipeline step 3 (docs/webhooks.md, "The pipeline job"), in two halves. This one writes nothing:
 * the connector's active default supplier, else one with the provider's merchant id, else with the
 * e-mail (case-insensitive), as prefetchSuppliers found them when it ran in this transaction. When
 * it finds none, createSupplierFor creates one.
 */
export async function findSupplier(
  trx: Knex.Transaction,
  tenantId: string,
  provider: ProviderSlug,
  cp: Counterparty,
  defaultSupplierId: string | null | undefined,
): Promise<SupplierResolution | null> {
  if (defaultSupplierId) {
    const [s] = await runCompiled<{ id: string; name: string }>(trx, 'supplier-default', [tenantId, defaultSupplierId], (tenant, id) =>
      active(trx, tenant).where({ id }).forShare().first('id', 'name'),
    );
    if (s) return { supplierId: s.id, name: s.name, how: 'default' };
  }
  return match(trx, tenantId, provider, cp, prefetchedByTrx.get(trx));
}

/**
 * findSupplier's answer when it needs no statement: the event's counterparty was prefetched in
 * this transaction (prefetchSuppliers) and matched a supplier, by merchant id or else by e-mail,
 * as match() decides it. Null when a statement would be needed or nothing matched (a default
 * supplier, a lookup not prefetched, a supplier to create): the caller then books the event alone.
 */
export function prefetchedSupplier(trx: Knex.Transaction, tenantId: string, provider: ProviderSlug, cp: Counterparty): SupplierResolution | null {
  const prefetched = prefetchedByTrx.get(trx);
  if (!prefetched) return null;
  for (const identity of identitiesOf(cp)) {
    const key = matchKey(identity.kind, tenantId, provider, identity.value);
    // Not prefetched: match() would run a statement here.
    if (!prefetched.has(key)) return null;
    const s = prefetched.get(key);
    if (s) return { supplierId: s.id, name: s.name, how: identity.how };
  }
  return null;
}

/**
 * The second half, after findSupplier found nothing: under an advisory lock on the counterparty's
 * identity, match again, else create (or reuse the placeholder), so concurrent events create one
 * supplier. No identity at all: one placeholder supplier per provider. Run it in a savepoint with
 * the invoice.
 */
export async function createSupplierFor(trx: Knex.Transaction, tenantId: string, provider: ProviderSlug, cp: Counterparty): Promise<SupplierResolution> {
  const name = cp.name?.trim() || cp.email?.trim() || null;
  if (!cp.merchantId && !cp.email && !name) {
    const placeholder = `${PROVIDER_LABEL[provider]} (unbekannter Zahlungspartner)`;
    await lockKey(trx, supplierLockKey(tenantId, `placeholder:${provider}`));
    const s = await active(trx, tenantId).where({ name: placeholder }).first('id', 'name');
    if (s) return { supplierId: s.id, name: s.name, how: 'placeholder' };
    const id = await create(trx, tenantId, { name: placeholder, merchantIds: {} });
    return { supplierId: id, name: placeholder, how: 'placeholder' };
  }

  const identity = cp.merchantId ? `m:${provider}:${cp.merchantId}` : cp.email ? `e:${cp.email.toLowerCase()}` : `n:${name}`;
  await lockKey(trx, supplierLockKey(tenantId, identity));
  const again = await match(trx, tenantId, provider, cp);
  if (again) return again;
  if (!cp.merchantId && !cp.email) {
    // Name only: reuse a supplier this pipeline created under the same name before.
    const s = await active(trx, tenantId).where({ name }).orderBy('createdAt').first('id', 'name');
    if (s) return { supplierId: s.id, name: s.name, how: 'created' };
  }
  const supplierName = (name ?? cp.merchantId ?? `${PROVIDER_LABEL[provider]} counterparty`).slice(0, 200);
  const id = await create(trx, tenantId, {
    name: supplierName,
    email: cp.email ? cp.email.toLowerCase().slice(0, 254) : null,
    iban: cp.iban && isValidIban(cp.iban) ? normalizeIban(cp.iban) : null,
    vatId: cp.vatId && isValidVatId(cp.vatId) ? normalizeVatId(cp.vatId) : null,
    country: cp.country && /^[A-Za-z]{2}$/.test(cp.country) ? cp.country.toUpperCase() : null,
    merchantIds: cp.merchantId ? { [provider]: cp.merchantId } : {},
  });
  return { supplierId: id, name: supplierName, how: 'created' };
}

type NewSupplier = Pick<Supplier, 'name' | 'merchantIds'> & Partial<Pick<Supplier, 'email' | 'iban' | 'vatId' | 'country'>>;

async function create(trx: Knex.Transaction, tenantId: string, values: NewSupplier): Promise<string> {
  const row = await Supplier.query(trx)
    .insert({ ...values, tenantId })
    .returning('*');
  await audit(trx, systemActor(tenantId), { action: 'supplier.created', entityType: 'supplier', entityId: row.id, data: { source: 'webhook' } });
  return row.id;
}
