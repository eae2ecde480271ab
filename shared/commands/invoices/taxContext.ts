import type { ItemTaxContext } from '../../domain/invoiceChecks';
import type { Tenant } from '../../models/Tenant';

/** The facts that decide each line's VAT category (docs/vat-categories.md): the tenant sells, the customer buys. */
export function itemTaxContext(
  tenant: Pick<Tenant, 'country' | 'vatId' | 'settings'>,
  buyer: { vatId: string | null; country: string | null } | null | undefined,
  incoming: boolean,
): ItemTaxContext {
  return {
    sellerCountry: tenant.country,
    sellerVatId: tenant.vatId ?? null,
    buyerCountry: buyer?.country ?? null,
    buyerVatId: buyer?.vatId ?? null,
    smallBusiness: !incoming && !!tenant.settings?.smallBusiness,
    incoming,
  };
}
