/**
 * EN 16931 rules on each invoice line (BG-25), including the line's VAT category (BR-x-02/05).
 * The runner applies the whole table to one line before the next; order in the table is the order
 * of the findings for a line.
 */
import Decimal from 'decimal.js';
import { SUPPORTED_CATEGORIES, UNIT_CODES, VAT_CATEGORIES } from './codeLists';
import type { InvoiceCtx, LineCtx, Rule } from './context';
import { lineNetDecimals } from './decimals';
import { num } from './values';
import { all, blank, text, textAt } from './xmlNodes';

type LineRule = Rule<{ inv: InvoiceCtx; line: LineCtx }>;

const sellerHasVatId = (inv: InvoiceCtx) => inv.sellerHasVaOrFc || inv.taxRepHasVa;

/** BR-S/Z/E-02: a line of this category needs a VAT identifier of the seller (or its representative). */
function sellerVatIdRule(id: string, category: string, label: string): LineRule {
  return {
    id,
    check: ({ inv, line }) =>
      line.category === category && !sellerHasVatId(inv)
        ? `A line with VAT category "${label}" requires the Seller VAT identifier (BT-31), tax registration identifier (BT-32) or tax representative VAT identifier (BT-63) (${line.where}).`
        : undefined,
  };
}

/** BR-Z/E/AE-05: a line of this category has a 0 % rate. */
function zeroRateRule(id: string, category: string, label: string): LineRule {
  return {
    id,
    check: ({ line }) =>
      line.category === category && !line.rate?.isZero()
        ? `In an Invoice line with VAT category "${label}" the VAT rate (BT-152) shall be 0 (${line.where}).`
        : undefined,
  };
}

export const lineRules: ReadonlyArray<LineRule> = [
  {
    id: 'BR-21',
    check: ({ line }) =>
      blank(textAt(line.node, 'AssociatedDocumentLineDocument/LineID'))
        ? `Each Invoice line (BG-25) shall have an Invoice line identifier (BT-126) (${line.where}).`
        : undefined,
  },
  { id: 'BR-22', check: ({ line }) => (!line.qtyNode ? `Each Invoice line (BG-25) shall have an Invoiced quantity (BT-129) (${line.where}).` : undefined) },
  {
    id: 'BR-23',
    check: ({ line }) =>
      line.qtyNode && blank(line.unit) ? `An Invoice line (BG-25) shall have an Invoiced quantity unit of measure code (BT-130) (${line.where}).` : undefined,
  },
  {
    id: 'BR-CL-23',
    check: ({ line }) =>
      !(line.qtyNode && blank(line.unit)) && line.unit && !UNIT_CODES.has(line.unit.trim())
        ? `Unit code ${line.unit} is not a known UN/ECE Rec 20/21 code (${line.where}).`
        : undefined,
  },
  {
    id: 'BR-24',
    check: ({ line }) => (line.netText === undefined ? `Each Invoice line (BG-25) shall have an Invoice line net amount (BT-131) (${line.where}).` : undefined),
  },
  {
    id: 'X-NUMBER',
    check: ({ line }) => (line.netText !== undefined && !line.net ? `Invoice line net amount "${line.netText}" is not a decimal (${line.where}).` : undefined),
  },
  lineNetDecimals,
  {
    id: 'BR-25',
    check: ({ line }) =>
      blank(textAt(line.node, 'SpecifiedTradeProduct/Name')) ? `Each Invoice line (BG-25) shall contain the Item name (BT-153) (${line.where}).` : undefined,
  },
  {
    id: 'BR-26',
    check: ({ line }) => (line.priceText === undefined ? `Each Invoice line (BG-25) shall contain the Item net price (BT-146) (${line.where}).` : undefined),
  },
  {
    id: 'BR-27',
    check: ({ line }) =>
      line.priceText !== undefined && line.price?.isNegative() && !line.price.isZero()
        ? `The Item net price (BT-146) shall NOT be negative (${line.where}).`
        : undefined,
  },
  {
    id: 'BR-28',
    check({ line }) {
      const gross = num(textAt(line.node, 'SpecifiedLineTradeAgreement/GrossPriceProductTradePrice/ChargeAmount'));
      if (gross?.isNegative() && !gross.isZero()) return `The Item gross price (BT-148) shall NOT be negative (${line.where}).`;
    },
  },
  {
    id: 'BR-CO-04',
    check: ({ line }) =>
      blank(line.category) ? `Each Invoice line (BG-25) shall be categorized with an Invoiced item VAT category code (BT-151) (${line.where}).` : undefined,
  },
  {
    id: 'BR-CL-18',
    check: ({ line }) =>
      line.category && !VAT_CATEGORIES.has(line.category)
        ? `VAT category code ${line.category} is not in the EN 16931 subset of UNTDID 5305 (${line.where}).`
        : undefined,
  },
  {
    id: 'X-UNSUPPORTED',
    check: ({ line }) =>
      line.category && VAT_CATEGORIES.has(line.category) && !SUPPORTED_CATEGORIES.has(line.category)
        ? `VAT category ${line.category} is not verified by this checker (${line.where}).`
        : undefined,
  },
  sellerVatIdRule('BR-S-02', 'S', 'Standard rated'),
  {
    id: 'BR-S-05',
    check: ({ line }) =>
      line.category === 'S' && !line.rate?.greaterThan(0)
        ? `In an Invoice line with VAT category "Standard rated" the VAT rate (BT-152) shall be greater than zero (${line.where}).`
        : undefined,
  },
  sellerVatIdRule('BR-Z-02', 'Z', 'Zero rated'),
  zeroRateRule('BR-Z-05', 'Z', 'Zero rated'),
  sellerVatIdRule('BR-E-02', 'E', 'Exempt from VAT'),
  zeroRateRule('BR-E-05', 'E', 'Exempt from VAT'),
  {
    id: 'BR-AE-02',
    check: ({ inv, line }) =>
      line.category === 'AE' && (!sellerHasVatId(inv) || !(inv.buyerHasVa || inv.buyerHasLegalId))
        ? `A line with VAT category "Reverse charge" requires the Seller VAT identifier (BT-31)/tax registration identifier (BT-32) and the Buyer VAT identifier (BT-48) or legal registration identifier (BT-47) (${line.where}).`
        : undefined,
  },
  zeroRateRule('BR-AE-05', 'AE', 'Reverse charge'),
  {
    id: 'BR-IC-02',
    check: ({ inv, line }) =>
      line.category === 'K' && (!(inv.sellerHasVa || inv.taxRepHasVa) || !inv.buyerHasVa)
        ? `A line with VAT category "Intra-community supply" requires the Seller VAT identifier (BT-31) or tax representative VAT identifier (BT-63) and the Buyer VAT identifier (BT-48) (${line.where}).`
        : undefined,
  },
  zeroRateRule('BR-IC-05', 'K', 'Intra-community supply'),
  {
    id: 'BR-G-02',
    check: ({ inv, line }) =>
      line.category === 'G' && !(inv.sellerHasVa || inv.taxRepHasVa)
        ? `A line with VAT category "Export outside the EU" requires the Seller VAT identifier (BT-31) or tax representative VAT identifier (BT-63) (${line.where}).`
        : undefined,
  },
  zeroRateRule('BR-G-05', 'G', 'Export outside the EU'),
  {
    id: 'BR-O-02',
    check: ({ inv, line }) =>
      line.category === 'O' && (inv.sellerHasVa || inv.taxRepHasVa || inv.buyerHasVa)
        ? `A line with VAT category "Not subject to VAT" shall not come with the Seller VAT identifier (BT-31), the Seller tax representative VAT identifier (BT-63) or the Buyer VAT identifier (BT-48) (${line.where}).`
        : undefined,
  },
  {
    id: 'BR-O-05',
    check: ({ line }) =>
      line.category === 'O' && line.rateText !== undefined
        ? `An Invoice line with VAT category "Not subject to VAT" shall not contain a VAT rate (BT-152) (${line.where}).`
        : undefined,
  },
  {
    // net = quantity x (price / base quantity), rounded half-up to cents (lines without
    // line-level allowances/charges only).
    id: 'X-LINE-NET',
    check({ line }) {
      const qty = num(text(line.qtyNode));
      const baseQty = num(textAt(line.node, 'SpecifiedLineTradeAgreement/NetPriceProductTradePrice/BasisQuantity')) ?? new Decimal(1);
      const lineAllowances = all(line.node, 'SpecifiedLineTradeSettlement/SpecifiedTradeAllowanceCharge').length;
      if (line.net && qty && line.price && !baseQty.isZero() && lineAllowances === 0) {
        const expected = qty.times(line.price).dividedBy(baseQty).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
        if (!expected.equals(line.net)) return `Line net amount ${line.netText} differs from quantity x net price = ${expected.toFixed(2)} (${line.where}).`;
      }
    },
  },
];
