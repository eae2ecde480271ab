/**
 * EN 16931 rules on the VAT breakdown (BG-23) and the VAT categories S, Z, E, AE, K, G and O: which
 * breakdown groups must exist, and that each group's amounts reconcile with the lines.
 * Order in the tables is the order of the findings.
 */
import Decimal from 'decimal.js';
import { SUPPORTED_CATEGORIES, VAT_CATEGORIES } from './codeLists';
import type { GroupCtx, InvoiceCtx, Rule } from './context';
import { vatBasisDecimals, vatTaxDecimals } from './decimals';
import { num, round0, round2, sum } from './values';
import { blank, text, textAt } from './xmlNodes';

type GroupRule = Rule<{ inv: InvoiceCtx; group: GroupCtx }>;

const headerCategories = (inv: InvoiceCtx) => inv.breakdown.map((b) => textAt(b, 'CategoryCode')?.trim());
const allowanceChargeCategories = (inv: InvoiceCtx) => inv.headerAllowanceCharges.map((n) => textAt(n, 'CategoryTradeTax/CategoryCode')?.trim());

/** Document-level allowances (false) / charges (true) per VAT category (and rate), as BR-x-08 use them. */
function docLevelSum(inv: InvoiceCtx, isCharge: boolean, cat: string, rate: Decimal | null): Decimal {
  return round2(
    sum(
      inv.headerAllowanceCharges
        .filter((n) => (textAt(n, 'ChargeIndicator/Indicator')?.trim() === 'true') === isCharge)
        .filter((n) => textAt(n, 'CategoryTradeTax/CategoryCode')?.trim() === cat)
        .filter((n) => rate === null || (num(textAt(n, 'CategoryTradeTax/RateApplicablePercent'))?.equals(rate) ?? false))
        .map((n) => num(textAt(n, 'ActualAmount')) ?? new Decimal(0)),
    ),
  );
}

/** BR-Z/E/AE-01: exactly one breakdown of the category when lines (or document level allowances/charges) have it, and none without. */
function oneBreakdownRule(id: string, cat: string, label: string): Rule<InvoiceCtx> {
  return {
    id,
    check(inv) {
      const inHeader = headerCategories(inv).filter((c) => c === cat).length;
      // As in the Schematron: a document level allowance or charge of the category counts like a line.
      const inLines = inv.lines.some((l) => l.category === cat) || allowanceChargeCategories(inv).includes(cat);
      if ((inHeader > 0 || inLines) && !(inHeader === 1 && inLines)) {
        return `An Invoice with "${label}" lines shall contain exactly one "${label}" VAT breakdown (BG-23), and such a breakdown needs such lines.`;
      }
    },
  };
}

/** Document level rules on which breakdown groups exist, before the per-group rules. */
export const breakdownPresenceRules: ReadonlyArray<Rule<InvoiceCtx>> = [
  { id: 'BR-CO-18', check: (inv) => (inv.breakdown.length === 0 ? 'An Invoice shall at least have one VAT breakdown group (BG-23).' : undefined) },
  {
    id: 'BR-S-01',
    check: (inv) =>
      (inv.lines.some((l) => l.category === 'S') || allowanceChargeCategories(inv).includes('S')) && !headerCategories(inv).includes('S')
        ? 'An Invoice with a "Standard rated" line shall contain at least one "Standard rated" VAT breakdown (BG-23).'
        : undefined,
  },
  oneBreakdownRule('BR-Z-01', 'Z', 'Zero rated'),
  oneBreakdownRule('BR-E-01', 'E', 'Exempt from VAT'),
  oneBreakdownRule('BR-AE-01', 'AE', 'Reverse charge'),
  oneBreakdownRule('BR-IC-01', 'K', 'Intra-community supply'),
  oneBreakdownRule('BR-G-01', 'G', 'Export outside the EU'),
  oneBreakdownRule('BR-O-01', 'O', 'Not subject to VAT'),
  {
    id: 'BR-O-11',
    check: (inv) =>
      headerCategories(inv).includes('O') && headerCategories(inv).some((c) => c !== 'O')
        ? 'An Invoice with a "Not subject to VAT" VAT breakdown (BG-23) shall not contain other VAT breakdown groups.'
        : undefined,
  },
  {
    id: 'BR-O-12',
    check: (inv) =>
      headerCategories(inv).includes('O') && inv.lines.some((l) => l.category !== 'O')
        ? 'An Invoice with a "Not subject to VAT" VAT breakdown (BG-23) shall not contain lines of another VAT category (BT-151).'
        : undefined,
  },
];

/** A group of this category with both amounts: the category rules (BR-x-08..10) apply. */
const checkable = (g: GroupCtx, cat: string): g is GroupCtx & { basis: Decimal; calc: Decimal } => g.cat === cat && !!g.basis && !!g.calc;

/** BR-Z/E/AE-08: the taxable amount is the sum of the category's line net amounts (± 1). */
function zeroTaxBasisRule(id: string, cat: string, label: string): GroupRule {
  return {
    id,
    check({ inv, group: g }) {
      if (!checkable(g, cat)) return;
      const lineSum = round2(sum(inv.lines.filter((l) => l.category === cat && l.net).map((l) => l.net!)))
        .plus(docLevelSum(inv, true, cat, null))
        .minus(docLevelSum(inv, false, cat, null));
      if (!(g.basis.minus(1).lessThan(lineSum) && g.basis.plus(1).greaterThan(lineSum))) {
        return `"${label}" taxable amount ${g.basisText} shall equal the sum of "${label}" line net amounts (${lineSum.toFixed(2)}) (${g.where}).`;
      }
    },
  };
}

/** BR-Z/E/AE-09: no tax in this category. */
function zeroTaxRule(id: string, cat: string, label: string): GroupRule {
  return {
    id,
    check: ({ group: g }) => (checkable(g, cat) && !g.calc.isZero() ? `"${label}" VAT category tax amount (BT-117) shall be 0 (${g.where}).` : undefined),
  };
}

/** BR-E/AE-10: an exemption reason is required. */
function exemptionReasonRule(id: string, cat: string, label: string): GroupRule {
  return {
    id,
    check: ({ group: g }) =>
      checkable(g, cat) && !g.reasonPresent
        ? `A "${label}" VAT breakdown shall have an exemption reason code (BT-121) or text (BT-120) (${g.where}).`
        : undefined,
  };
}

/** Run per ApplicableTradeTax of the header settlement. */
export const breakdownRules: ReadonlyArray<GroupRule> = [
  {
    id: 'BR-45',
    check: ({ group: g }) =>
      g.basisText === undefined ? `Each VAT breakdown (BG-23) shall have a VAT category taxable amount (BT-116) (${g.where}).` : undefined,
  },
  {
    id: 'BR-46',
    check: ({ group: g }) => (g.calcText === undefined ? `Each VAT breakdown (BG-23) shall have a VAT category tax amount (BT-117) (${g.where}).` : undefined),
  },
  {
    id: 'BR-47',
    check: ({ group: g }) =>
      textAt(g.node, 'TypeCode')?.trim().toUpperCase() !== 'VAT' || blank(g.cat)
        ? `Each VAT breakdown (BG-23) shall be defined through a VAT category code (BT-118) (${g.where}).`
        : undefined,
  },
  {
    id: 'BR-48',
    check: ({ group: g }) =>
      g.rateText === undefined && g.cat !== 'O'
        ? `Each VAT breakdown (BG-23) shall have a VAT category rate (BT-119), except if the Invoice is not subject to VAT (${g.where}).`
        : undefined,
  },
  vatBasisDecimals,
  vatTaxDecimals,
  {
    id: 'BR-CL-22',
    check: ({ group: g }) =>
      g.reasonCode && !/^VATEX-/i.test(g.reasonCode) ? `Exemption reason code ${g.reasonCode} is not a VATEX code (${g.where}).` : undefined,
  },
  {
    // tax = basis x rate / 100 (tolerance 1 currency unit, as the Schematron).
    id: 'BR-CO-17',
    check({ group: g }) {
      if (!g.basis || !g.calc) return;
      if (!g.rate) {
        if (!round0(g.calc).isZero()) return `VAT category tax amount (BT-117) shall be 0 without a VAT rate (${g.where}).`;
      } else if (round0(g.rate).isZero()) {
        if (!round0(g.calc).isZero()) return `VAT category tax amount (BT-117) ${g.calcText} shall be 0 for a 0 % rate (${g.where}).`;
      } else {
        const expected = round2(g.basis.abs().times(g.rate.dividedBy(100)));
        if (!(g.calc.abs().minus(1).lessThanOrEqualTo(expected) && g.calc.abs().plus(1).greaterThanOrEqualTo(expected))) {
          return `VAT category tax amount (BT-117) ${g.calcText} ≠ taxable amount ${g.basisText} x ${g.rateText} % (${g.where}).`;
        }
      }
    },
  },
  {
    id: 'BR-CL-18',
    check: ({ group: g }) =>
      g.cat && !VAT_CATEGORIES.has(g.cat) ? `VAT category code ${g.cat} is not in the EN 16931 subset of UNTDID 5305 (${g.where}).` : undefined,
  },
  {
    id: 'X-UNSUPPORTED',
    check: ({ group: g }) =>
      g.cat && VAT_CATEGORIES.has(g.cat) && !SUPPORTED_CATEGORIES.has(g.cat)
        ? `VAT category ${g.cat} is not verified by this checker (${g.where}).`
        : undefined,
  },
  {
    id: 'BR-S-08',
    check({ inv, group: g }) {
      if (!checkable(g, 'S') || !g.rate) return;
      const rate = g.rate;
      const lineSum = round2(sum(inv.lines.filter((l) => l.category === 'S' && l.rate?.equals(rate) && l.net).map((l) => l.net!)))
        .plus(docLevelSum(inv, true, 'S', rate))
        .minus(docLevelSum(inv, false, 'S', rate));
      if (!g.basis.equals(lineSum)) {
        return `"Standard rated" taxable amount ${g.basisText} at ${g.rateText} % shall equal the sum of line net amounts at that rate ± document level charges/allowances (${lineSum.toFixed(2)}) (${g.where}).`;
      }
    },
  },
  {
    id: 'BR-S-09',
    check({ group: g }) {
      if (!checkable(g, 'S') || !g.rate) return;
      const expected = round2(g.basis.abs().times(g.rate).dividedBy(100));
      if (!(g.calc.abs().minus(1).lessThan(expected) && g.calc.abs().plus(1).greaterThan(expected))) {
        return `"Standard rated" tax amount ${g.calcText} shall equal taxable amount x rate (${expected.toFixed(2)}) (${g.where}).`;
      }
    },
  },
  {
    id: 'BR-S-10',
    check: ({ group: g }) =>
      checkable(g, 'S') && g.reasonPresent ? `A "Standard rated" VAT breakdown shall not have an exemption reason (BT-120/BT-121) (${g.where}).` : undefined,
  },
  zeroTaxBasisRule('BR-Z-08', 'Z', 'Zero rated'),
  zeroTaxRule('BR-Z-09', 'Z', 'Zero rated'),
  {
    id: 'BR-Z-10',
    check: ({ group: g }) =>
      checkable(g, 'Z') && g.reasonPresent ? `A "Zero rated" VAT breakdown shall not have an exemption reason (BT-120/BT-121) (${g.where}).` : undefined,
  },
  zeroTaxBasisRule('BR-E-08', 'E', 'Exempt from VAT'),
  zeroTaxRule('BR-E-09', 'E', 'Exempt from VAT'),
  exemptionReasonRule('BR-E-10', 'E', 'Exempt from VAT'),
  zeroTaxBasisRule('BR-AE-08', 'AE', 'Reverse charge'),
  zeroTaxRule('BR-AE-09', 'AE', 'Reverse charge'),
  exemptionReasonRule('BR-AE-10', 'AE', 'Reverse charge'),
  zeroTaxBasisRule('BR-IC-08', 'K', 'Intra-community supply'),
  zeroTaxRule('BR-IC-09', 'K', 'Intra-community supply'),
  exemptionReasonRule('BR-IC-10', 'K', 'Intra-community supply'),
  {
    id: 'BR-IC-11',
    check: ({ inv, group: g }) =>
      g.cat === 'K' && blank(text(inv.deliveryDate)) && !inv.periodStart && !inv.periodEnd
        ? `An Invoice with an "Intra-community supply" VAT breakdown shall have the Actual delivery date (BT-72) or the Invoicing period (BG-14) (${g.where}).`
        : undefined,
  },
  {
    id: 'BR-IC-12',
    check: ({ inv, group: g }) =>
      g.cat === 'K' && blank(inv.shipToCountry)
        ? `An Invoice with an "Intra-community supply" VAT breakdown shall have the Deliver to country code (BT-80) (${g.where}).`
        : undefined,
  },
  zeroTaxBasisRule('BR-G-08', 'G', 'Export outside the EU'),
  zeroTaxRule('BR-G-09', 'G', 'Export outside the EU'),
  exemptionReasonRule('BR-G-10', 'G', 'Export outside the EU'),
  zeroTaxBasisRule('BR-O-08', 'O', 'Not subject to VAT'),
  zeroTaxRule('BR-O-09', 'O', 'Not subject to VAT'),
  exemptionReasonRule('BR-O-10', 'O', 'Not subject to VAT'),
];

/** After the groups: every (category, rate) used by a line has a breakdown group. */
export const lineBreakdownRules: ReadonlyArray<Rule<InvoiceCtx>> = [
  {
    id: 'X-LINE-BREAKDOWN',
    check: (inv) =>
      inv.lines
        .filter((l) => l.category && SUPPORTED_CATEGORIES.has(l.category))
        .filter(
          (l) =>
            !inv.breakdown.some(
              (b) =>
                textAt(b, 'CategoryCode')?.trim() === l.category &&
                (l.category !== 'S' || (num(textAt(b, 'RateApplicablePercent'))?.equals(l.rate ?? -1) ?? false)),
            ),
        )
        .map((l) => `Line ${l.id} (VAT ${l.category} ${l.rate?.toString() ?? '?'} %) has no matching VAT breakdown (BG-23).`),
  },
];
