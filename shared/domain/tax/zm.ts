import { D, type Dec, dec, money } from './amounts';
import { normalizeVatId } from '../vatId';

/**
 * The recapitulative statement (Zusammenfassende Meldung, ZM; Art. 262 VAT Directive, AT Art. 21
 * Abs. 3 UStG 1994, DE § 18a UStG): per buyer VAT ID, the intra-Community supplies of goods (K),
 * the services under reverse charge (AE) and triangular trade. Credit notes arrive negative, so a
 * buyer's line is the net of the period, as on the U30 (docs/vat-categories.md, "ZM").
 */
export type ZmKind = 'supplies' | 'services' | 'triangular';

export interface ZmInputRow {
  vatId: string;
  kind: ZmKind;
  /** EUR, decimal string; negative for credit notes. */
  net: string;
}

export interface ZmLine {
  vatId: string;
  supplies: string;
  services: string;
  triangular: string;
}

export interface ZmResult {
  lines: ZmLine[];
  totals: { supplies: string; services: string; triangular: string };
}

/** One line per buyer VAT ID (normalized), sorted by it; buyers whose amounts all net to zero drop out. */
export function computeZm(rows: readonly ZmInputRow[]): ZmResult {
  const zero = new D(0);
  const byVat = new Map<string, Record<ZmKind, Dec>>();
  for (const r of rows) {
    const vatId = normalizeVatId(r.vatId);
    const sums = byVat.get(vatId) ?? { supplies: zero, services: zero, triangular: zero };
    sums[r.kind] = sums[r.kind].plus(dec(r.net, 'net'));
    byVat.set(vatId, sums);
  }
  const totals = { supplies: zero, services: zero, triangular: zero };
  const lines: ZmLine[] = [];
  for (const vatId of [...byVat.keys()].sort()) {
    const s = byVat.get(vatId)!;
    if (s.supplies.isZero() && s.services.isZero() && s.triangular.isZero()) continue;
    totals.supplies = totals.supplies.plus(s.supplies);
    totals.services = totals.services.plus(s.services);
    totals.triangular = totals.triangular.plus(s.triangular);
    lines.push({ vatId, supplies: money(s.supplies), services: money(s.services), triangular: money(s.triangular) });
  }
  return { lines, totals: { supplies: money(totals.supplies), services: money(totals.services), triangular: money(totals.triangular) } };
}
