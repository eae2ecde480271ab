/**
 * Executable EN 16931 business rules for the CII syntax: the rules that apply to what we produce,
 * re-implemented with the official Schematron's XPath semantics and tolerances (it needs Saxon,
 * which we do not run). Fails closed: what it cannot verify is X-UNSUPPORTED; project rules X-*
 * add checks the Schematron lacks. Rule list: docs/e-invoicing.md, "The EN 16931 checker".
 */
import Decimal from 'decimal.js';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { KNOWN_UNIT_CODES } from './unitCodes';

export interface En16931Violation {
  rule: string;
  message: string;
}

type XNode = { [key: string]: unknown };

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  alwaysCreateTextNode: true,
  isArray: (_name: string, _jpath: unknown, _isLeaf: boolean, isAttribute: boolean) => !isAttribute,
});

// --- navigation helpers (namespace prefixes are removed by the parser) -----------------------------

function kids(node: XNode | undefined, name: string): XNode[] {
  if (!node) return [];
  const v = node[name];
  if (!Array.isArray(v)) return [];
  return v.map((x) => (typeof x === 'object' && x !== null ? (x as XNode) : { '#text': String(x) }));
}

function all(node: XNode | undefined, path: string): XNode[] {
  let current: XNode[] = node ? [node] : [];
  for (const step of path.split('/')) current = current.flatMap((n) => kids(n, step));
  return current;
}

function one(node: XNode | undefined, path: string): XNode | undefined {
  return all(node, path)[0];
}

function text(node: XNode | undefined): string | undefined {
  if (!node) return undefined;
  const t = node['#text'];
  return t === undefined || t === null ? undefined : String(t);
}

function textAt(node: XNode | undefined, path: string): string | undefined {
  return text(one(node, path));
}

function attr(node: XNode | undefined, name: string): string | undefined {
  if (!node) return undefined;
  const v = node[`@_${name}`];
  return v === undefined ? undefined : String(v);
}

function blank(s: string | undefined): boolean {
  return s === undefined || s.replace(/\s+/g, '') === '';
}

// --- decimal helpers --------------------------------------------------------------------------------

const XSD_DECIMAL_RE = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

function num(s: string | undefined): Decimal | null {
  if (s === undefined) return null;
  const t = s.trim();
  if (!XSD_DECIMAL_RE.test(t)) return null;
  return new Decimal(t);
}

/** XPath `round(x * 100) div 100`: half-up towards positive infinity. */
function round2(d: Decimal): Decimal {
  return d.toDecimalPlaces(2, Decimal.ROUND_HALF_CEIL);
}

/** XPath `round(x)`. */
function round0(d: Decimal): Decimal {
  return d.toDecimalPlaces(0, Decimal.ROUND_HALF_CEIL);
}

function decimals(s: string | undefined): number {
  if (s === undefined) return 0;
  const i = s.trim().indexOf('.');
  return i < 0 ? 0 : s.trim().length - i - 1;
}

const sum = (values: Decimal[]) => values.reduce((a, b) => a.plus(b), new Decimal(0));

// --- code lists (subsets; see module comment) -------------------------------------------------------

// UNTDID 1001 invoice/credit note type codes allowed by EN 16931 (BR-CL-01).
const DOCUMENT_TYPE_CODES = new Set(
  (
    '71 80 81 82 83 84 102 130 202 203 204 211 218 219 261 262 295 296 308 325 326 331 380 381 382 383 ' +
    '384 385 386 387 388 389 390 393 394 395 396 420 456 457 458 527 532 553 575 623 633 751 780 817 870 875 876 877 935'
  ).split(' '),
);

// ISO 3166-1 alpha-2 plus "1A" (Kosovo) and "EL" (Greek VAT prefix), as in the Schematron.
const VAT_PREFIXES = new Set(
  (
    '1A AD AE AF AG AI AL AM AN AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BL BJ BM BN BO BQ BR BS BT BV BW BY BZ ' +
    'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH EL ER ES ET FI FJ FK FM FO FR ' +
    'GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP ' +
    'KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT ' +
    'MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW ' +
    'SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM ' +
    'US UY UZ VA VC VE VG VI VN VU WF WS XI YE YT ZA ZM ZW'
  ).split(' '),
);
const COUNTRY_CODES = new Set([...VAT_PREFIXES].filter((c) => c !== '1A' && c !== 'EL'));

// UNTDID 4461 payment means (BR-CL-16), the subset relevant for AT/DE invoicing.
const PAYMENT_MEANS_CODES = new Set('1 2 3 4 5 10 20 30 31 42 48 49 54 55 57 58 59 68 97 ZZZ'.split(' '));

// UNTDID 5305 subset of EN 16931 (BR-CL-17/18).
const VAT_CATEGORIES = new Set(['S', 'Z', 'E', 'AE', 'K', 'G', 'O', 'L', 'M', 'B']);
const SUPPORTED_CATEGORIES = new Set(['S', 'Z', 'E', 'AE']);

// UN/ECE Rec 20/21 (BR-CL-23): the codes we emit plus common ones seen in official samples.
const UNIT_CODES = new Set([...KNOWN_UNIT_CODES, 'NAR', 'EA', 'XBC', 'XBO', 'XCT', 'XPX', 'XPP', 'KWH', 'P1', 'E48']);

const CURRENCY_RE = /^[A-Z]{3}$/;
const DATE_102_RE = /^(\d{4})(\d{2})(\d{2})$/;

function validDate102(s: string | undefined): boolean {
  if (!s) return false;
  const m = DATE_102_RE.exec(s.trim());
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

// --- the checker --------------------------------------------------------------------------------------

interface LineInfo {
  id: string;
  net: Decimal | null;
  category: string | undefined;
  rate: Decimal | null;
}

/**
 * Checks a CII (D16B) invoice against the EN 16931 rules listed in the module comment.
 * Returns one entry per failed rule instance; an empty array means the document passed.
 */
export function checkEn16931(xml: string | Buffer): En16931Violation[] {
  const source = typeof xml === 'string' ? xml : xml.toString('utf8');
  const out: En16931Violation[] = [];
  const fail = (rule: string, message: string) => out.push({ rule, message: `[${rule}] ${message}` });

  const wellFormed = XMLValidator.validate(source);
  if (wellFormed !== true) {
    fail('XML', `Not well-formed XML: ${wellFormed.err.msg} (line ${wellFormed.err.line})`);
    return out;
  }
  const parsed = parser.parse(source) as XNode;
  const root = kids(parsed, 'CrossIndustryInvoice')[0];
  if (!root) {
    fail('XML', 'Root element is not CrossIndustryInvoice');
    return out;
  }

  const doc = one(root, 'ExchangedDocument');
  const tx = one(root, 'SupplyChainTradeTransaction');
  const agreement = one(tx, 'ApplicableHeaderTradeAgreement');
  const settlement = one(tx, 'ApplicableHeaderTradeSettlement');
  const seller = one(agreement, 'SellerTradeParty');
  const buyer = one(agreement, 'BuyerTradeParty');
  const lineNodes = kids(tx, 'IncludedSupplyChainTradeLineItem');
  const breakdown = kids(settlement, 'ApplicableTradeTax');
  const totals = one(settlement, 'SpecifiedTradeSettlementHeaderMonetarySummation');
  const currency = textAt(settlement, 'InvoiceCurrencyCode')?.trim();

  // ---- invoice level mandatory elements
  if (blank(textAt(root, 'ExchangedDocumentContext/GuidelineSpecifiedDocumentContextParameter/ID'))) {
    fail('BR-01', 'An Invoice shall have a Specification identifier (BT-24).');
  }
  if (blank(textAt(doc, 'ID'))) fail('BR-02', 'An Invoice shall have an Invoice number (BT-1).');
  const issueDate = all(doc, 'IssueDateTime/DateTimeString').find((n) => attr(n, 'format') === '102');
  if (blank(text(issueDate))) fail('BR-03', 'An Invoice shall have an Invoice issue date (BT-2) in format 102.');
  const typeCode = textAt(doc, 'TypeCode')?.trim();
  if (blank(typeCode)) fail('BR-04', 'An Invoice shall have an Invoice type code (BT-3).');
  else if (!DOCUMENT_TYPE_CODES.has(typeCode!)) fail('BR-CL-01', `Invoice type code ${typeCode} is not in UNTDID 1001 (EN 16931 subset).`);
  if (blank(currency)) fail('BR-05', 'An Invoice shall have an Invoice currency code (BT-5).');
  else if (!CURRENCY_RE.test(currency!)) fail('BR-CL-04', `Invoice currency code ${currency} is not an ISO 4217 code.`);

  const periodStart = one(settlement, 'BillingSpecifiedPeriod/StartDateTime/DateTimeString');
  const periodEnd = one(settlement, 'BillingSpecifiedPeriod/EndDateTime/DateTimeString');
  for (const dt of [
    ...all(tx, 'ApplicableHeaderTradeDelivery/ActualDeliverySupplyChainEvent/OccurrenceDateTime/DateTimeString'),
    ...all(settlement, 'SpecifiedTradePaymentTerms/DueDateDateTime/DateTimeString'),
    ...(issueDate ? [issueDate] : []),
    ...(periodStart ? [periodStart] : []),
    ...(periodEnd ? [periodEnd] : []),
  ]) {
    if (attr(dt, 'format') === '102' && !validDate102(text(dt))) fail('X-DATE', `Date "${text(dt)}" is not a valid YYYYMMDD date.`);
  }
  // Format 102 (YYYYMMDD) compares as text.
  if (periodStart && periodEnd && text(periodEnd)! < text(periodStart)!) {
    fail(
      'BR-29',
      'If both Invoicing period start date (BT-73) and Invoicing period end date (BT-74) are given then the Invoicing period end date (BT-74) shall be later or equal to the Invoicing period start date (BT-73).',
    );
  }

  if (blank(textAt(seller, 'Name'))) fail('BR-06', 'An Invoice shall contain the Seller name (BT-27).');
  if (blank(textAt(buyer, 'Name'))) fail('BR-07', 'An Invoice shall contain the Buyer name (BT-44).');
  const sellerAddr = one(seller, 'PostalTradeAddress');
  if (!sellerAddr) fail('BR-08', 'An Invoice shall contain the Seller postal address (BG-5).');
  else if (blank(textAt(sellerAddr, 'CountryID'))) fail('BR-09', 'The Seller postal address (BG-5) shall contain a Seller country code (BT-40).');
  const buyerAddr = one(buyer, 'PostalTradeAddress');
  if (!buyerAddr) fail('BR-10', 'An Invoice shall contain the Buyer postal address (BG-8).');
  else if (blank(textAt(buyerAddr, 'CountryID'))) fail('BR-11', 'The Buyer postal address shall contain a Buyer country code (BT-55).');
  for (const c of all(root, 'SupplyChainTradeTransaction/ApplicableHeaderTradeAgreement/SellerTradeParty/PostalTradeAddress/CountryID').concat(
    all(root, 'SupplyChainTradeTransaction/ApplicableHeaderTradeAgreement/BuyerTradeParty/PostalTradeAddress/CountryID'),
  )) {
    const code = text(c)?.trim();
    if (code && !COUNTRY_CODES.has(code)) fail('BR-CL-14', `Country code ${code} is not an ISO 3166-1 alpha-2 code.`);
  }
  if (lineNodes.length === 0) fail('BR-16', 'An Invoice shall have at least one Invoice line (BG-25).');

  for (const [who, party] of [
    ['Seller', seller],
    ['Buyer', buyer],
  ] as const) {
    const uri = one(party, 'URIUniversalCommunication');
    if (uri && blank(attr(one(uri, 'URIID'), 'schemeID'))) {
      fail(who === 'Seller' ? 'BR-62' : 'BR-63', `The ${who} electronic address (${who === 'Seller' ? 'BT-34' : 'BT-49'}) shall have a Scheme identifier.`);
    }
  }

  const sellerTaxIds = kids(seller, 'SpecifiedTaxRegistration').map((r) => one(r, 'ID'));
  const sellerHasVa = sellerTaxIds.some((id) => attr(id, 'schemeID') === 'VA' && !blank(text(id)));
  const sellerHasVaOrFc = sellerTaxIds.some((id) => ['VA', 'FC'].includes(attr(id, 'schemeID') ?? '') && !blank(text(id)));
  const taxRepHasVa = all(agreement, 'SellerTaxRepresentativeTradeParty/SpecifiedTaxRegistration/ID').some((id) => attr(id, 'schemeID') === 'VA');
  const buyerHasVa = all(buyer, 'SpecifiedTaxRegistration/ID').some((id) => attr(id, 'schemeID') === 'VA' && !blank(text(id)));
  const buyerHasLegalId = !blank(textAt(buyer, 'SpecifiedLegalOrganization/ID'));

  if (seller && !(kids(seller, 'ID').length || kids(seller, 'GlobalID').length || !blank(textAt(seller, 'SpecifiedLegalOrganization/ID')) || sellerHasVa)) {
    fail(
      'BR-CO-26',
      'The Seller identifier (BT-29), the Seller legal registration identifier (BT-30) and/or the Seller VAT identifier (BT-31) shall be present.',
    );
  }
  for (const id of all(agreement, 'SellerTradeParty/SpecifiedTaxRegistration/ID').concat(
    all(agreement, 'BuyerTradeParty/SpecifiedTaxRegistration/ID'),
    all(agreement, 'SellerTaxRepresentativeTradeParty/SpecifiedTaxRegistration/ID'),
  )) {
    if (attr(id, 'schemeID') !== 'VA') continue;
    const v = (text(id) ?? '').trim();
    if (!VAT_PREFIXES.has(v.slice(0, 2))) fail('BR-CO-09', `VAT identifier "${v}" shall have an ISO 3166-1 alpha-2 prefix (or EL).`);
  }

  // ---- fail closed on what this checker does not model
  const allowanceCount =
    all(settlement, 'SpecifiedTradeAllowanceCharge').length +
    lineNodes.reduce(
      (n, l) =>
        n +
        all(l, 'SpecifiedLineTradeSettlement/SpecifiedTradeAllowanceCharge').length +
        all(l, 'SpecifiedLineTradeAgreement/NetPriceProductTradePrice/AppliedTradeAllowanceCharge').length,
      0,
    );
  if (allowanceCount > 0) fail('X-UNSUPPORTED', 'Allowances and charges (BG-20, BG-21, BG-27, BG-28) are not verified by this checker.');

  // ---- lines
  const lines: LineInfo[] = [];
  for (const [i, line] of lineNodes.entries()) {
    const id = textAt(line, 'AssociatedDocumentLineDocument/LineID')?.trim() || `#${i + 1}`;
    const where = `line ${id}`;
    if (blank(textAt(line, 'AssociatedDocumentLineDocument/LineID')))
      fail('BR-21', `Each Invoice line (BG-25) shall have an Invoice line identifier (BT-126) (${where}).`);
    const qtyNode = one(line, 'SpecifiedLineTradeDelivery/BilledQuantity');
    if (!qtyNode) fail('BR-22', `Each Invoice line (BG-25) shall have an Invoiced quantity (BT-129) (${where}).`);
    const unit = attr(qtyNode, 'unitCode');
    if (qtyNode && blank(unit)) fail('BR-23', `An Invoice line (BG-25) shall have an Invoiced quantity unit of measure code (BT-130) (${where}).`);
    else if (unit && !UNIT_CODES.has(unit.trim())) fail('BR-CL-23', `Unit code ${unit} is not a known UN/ECE Rec 20/21 code (${where}).`);
    const netText = textAt(line, 'SpecifiedLineTradeSettlement/SpecifiedTradeSettlementLineMonetarySummation/LineTotalAmount');
    const net = num(netText);
    if (netText === undefined) fail('BR-24', `Each Invoice line (BG-25) shall have an Invoice line net amount (BT-131) (${where}).`);
    else if (!net) fail('X-NUMBER', `Invoice line net amount "${netText}" is not a decimal (${where}).`);
    else if (decimals(netText) > 2) fail('BR-DEC-23', `The Invoice line net amount (BT-131) has more than 2 decimals (${where}).`);
    if (blank(textAt(line, 'SpecifiedTradeProduct/Name'))) fail('BR-25', `Each Invoice line (BG-25) shall contain the Item name (BT-153) (${where}).`);
    const priceText = textAt(line, 'SpecifiedLineTradeAgreement/NetPriceProductTradePrice/ChargeAmount');
    const price = num(priceText);
    if (priceText === undefined) fail('BR-26', `Each Invoice line (BG-25) shall contain the Item net price (BT-146) (${where}).`);
    else if (price?.isNegative() && !price.isZero()) fail('BR-27', `The Item net price (BT-146) shall NOT be negative (${where}).`);
    const gross = num(textAt(line, 'SpecifiedLineTradeAgreement/GrossPriceProductTradePrice/ChargeAmount'));
    if (gross?.isNegative() && !gross.isZero()) fail('BR-28', `The Item gross price (BT-148) shall NOT be negative (${where}).`);

    const tax = kids(one(line, 'SpecifiedLineTradeSettlement'), 'ApplicableTradeTax').find((t) => textAt(t, 'TypeCode')?.trim().toUpperCase() === 'VAT');
    const category = textAt(tax, 'CategoryCode')?.trim();
    if (blank(category)) fail('BR-CO-04', `Each Invoice line (BG-25) shall be categorized with an Invoiced item VAT category code (BT-151) (${where}).`);
    const rateText = textAt(tax, 'RateApplicablePercent');
    const rate = num(rateText);
    if (category) checkLineCategory(category, rate, where);

    // X-LINE-NET: net = quantity x (price / base quantity), rounded half-up to cents (lines
    // without line-level allowances/charges only).
    const qty = num(text(qtyNode));
    const baseQty = num(textAt(line, 'SpecifiedLineTradeAgreement/NetPriceProductTradePrice/BasisQuantity')) ?? new Decimal(1);
    const lineAllowances = all(line, 'SpecifiedLineTradeSettlement/SpecifiedTradeAllowanceCharge').length;
    if (net && qty && price && !baseQty.isZero() && lineAllowances === 0) {
      const expected = qty.times(price).dividedBy(baseQty).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
      if (!expected.equals(net)) {
        fail('X-LINE-NET', `Line net amount ${netText} differs from quantity x net price = ${expected.toFixed(2)} (${where}).`);
      }
    }
    lines.push({ id, net, category, rate });
  }

  function checkLineCategory(category: string, rate: Decimal | null, where: string): void {
    if (!VAT_CATEGORIES.has(category)) {
      fail('BR-CL-18', `VAT category code ${category} is not in the EN 16931 subset of UNTDID 5305 (${where}).`);
      return;
    }
    if (!SUPPORTED_CATEGORIES.has(category)) {
      fail('X-UNSUPPORTED', `VAT category ${category} is not verified by this checker (${where}).`);
      return;
    }
    const zeroRate = rate?.isZero();
    if (category === 'S') {
      if (!sellerHasVaOrFc && !taxRepHasVa)
        fail(
          'BR-S-02',
          `A line with VAT category "Standard rated" requires the Seller VAT identifier (BT-31), tax registration identifier (BT-32) or tax representative VAT identifier (BT-63) (${where}).`,
        );
      if (!rate?.greaterThan(0))
        fail('BR-S-05', `In an Invoice line with VAT category "Standard rated" the VAT rate (BT-152) shall be greater than zero (${where}).`);
    } else if (category === 'Z') {
      if (!sellerHasVaOrFc && !taxRepHasVa)
        fail(
          'BR-Z-02',
          `A line with VAT category "Zero rated" requires the Seller VAT identifier (BT-31), tax registration identifier (BT-32) or tax representative VAT identifier (BT-63) (${where}).`,
        );
      if (!zeroRate) fail('BR-Z-05', `In an Invoice line with VAT category "Zero rated" the VAT rate (BT-152) shall be 0 (${where}).`);
    } else if (category === 'E') {
      if (!sellerHasVaOrFc && !taxRepHasVa)
        fail(
          'BR-E-02',
          `A line with VAT category "Exempt from VAT" requires the Seller VAT identifier (BT-31), tax registration identifier (BT-32) or tax representative VAT identifier (BT-63) (${where}).`,
        );
      if (!zeroRate) fail('BR-E-05', `In an Invoice line with VAT category "Exempt from VAT" the VAT rate (BT-152) shall be 0 (${where}).`);
    } else if (category === 'AE') {
      if (!(sellerHasVaOrFc || taxRepHasVa) || !(buyerHasVa || buyerHasLegalId)) {
        fail(
          'BR-AE-02',
          `A line with VAT category "Reverse charge" requires the Seller VAT identifier (BT-31)/tax registration identifier (BT-32) and the Buyer VAT identifier (BT-48) or legal registration identifier (BT-47) (${where}).`,
        );
      }
      if (!zeroRate) fail('BR-AE-05', `In an Invoice line with VAT category "Reverse charge" the VAT rate (BT-152) shall be 0 (${where}).`);
    }
  }

  // ---- VAT breakdown
  if (breakdown.length === 0) fail('BR-CO-18', 'An Invoice shall at least have one VAT breakdown group (BG-23).');
  const headerCats = breakdown.map((b) => textAt(b, 'CategoryCode')?.trim());
  const lineCats = lines.map((l) => l.category);
  if (lineCats.includes('S') && !headerCats.includes('S')) {
    fail('BR-S-01', 'An Invoice with a "Standard rated" line shall contain at least one "Standard rated" VAT breakdown (BG-23).');
  }
  for (const [cat, rule, label] of [
    ['Z', 'BR-Z-01', 'Zero rated'],
    ['E', 'BR-E-01', 'Exempt from VAT'],
    ['AE', 'BR-AE-01', 'Reverse charge'],
  ] as const) {
    const inHeader = headerCats.filter((c) => c === cat).length;
    const inLines = lineCats.includes(cat);
    if ((inHeader > 0 || inLines) && !(inHeader === 1 && inLines)) {
      fail(rule, `An Invoice with "${label}" lines shall contain exactly one "${label}" VAT breakdown (BG-23), and such a breakdown needs such lines.`);
    }
  }

  // Document-level allowances (false) / charges (true) per VAT category (and rate), as BR-x-08 use them.
  const headerAllowanceCharges = all(settlement, 'SpecifiedTradeAllowanceCharge');
  const docLevelSum = (isCharge: boolean, cat: string, rate: Decimal | null) =>
    round2(
      sum(
        headerAllowanceCharges
          .filter((n) => (textAt(n, 'ChargeIndicator/Indicator')?.trim() === 'true') === isCharge)
          .filter((n) => textAt(n, 'CategoryTradeTax/CategoryCode')?.trim() === cat)
          .filter((n) => rate === null || (num(textAt(n, 'CategoryTradeTax/RateApplicablePercent'))?.equals(rate) ?? false))
          .map((n) => num(textAt(n, 'ActualAmount')) ?? new Decimal(0)),
      ),
    );

  const breakdownBases: Decimal[] = [];
  for (const [i, b] of breakdown.entries()) {
    const where = `VAT breakdown #${i + 1}`;
    const basisText = textAt(b, 'BasisAmount');
    const calcText = textAt(b, 'CalculatedAmount');
    const cat = textAt(b, 'CategoryCode')?.trim();
    const rateText = textAt(b, 'RateApplicablePercent');
    const basis = num(basisText);
    const calc = num(calcText);
    const rate = num(rateText);
    if (basisText === undefined) fail('BR-45', `Each VAT breakdown (BG-23) shall have a VAT category taxable amount (BT-116) (${where}).`);
    if (calcText === undefined) fail('BR-46', `Each VAT breakdown (BG-23) shall have a VAT category tax amount (BT-117) (${where}).`);
    if (textAt(b, 'TypeCode')?.trim().toUpperCase() !== 'VAT' || blank(cat))
      fail('BR-47', `Each VAT breakdown (BG-23) shall be defined through a VAT category code (BT-118) (${where}).`);
    if (rateText === undefined && cat !== 'O')
      fail('BR-48', `Each VAT breakdown (BG-23) shall have a VAT category rate (BT-119), except if the Invoice is not subject to VAT (${where}).`);
    if (decimals(basisText) > 2) fail('BR-DEC-19', `The VAT category taxable amount (BT-116) has more than 2 decimals (${where}).`);
    if (decimals(calcText) > 2) fail('BR-DEC-20', `The VAT category tax amount (BT-117) has more than 2 decimals (${where}).`);
    if (basis) breakdownBases.push(basis);
    const reasonPresent = !blank(textAt(b, 'ExemptionReason')) || !blank(textAt(b, 'ExemptionReasonCode'));
    const reasonCode = textAt(b, 'ExemptionReasonCode')?.trim();
    if (reasonCode && !/^VATEX-/i.test(reasonCode)) fail('BR-CL-22', `Exemption reason code ${reasonCode} is not a VATEX code (${where}).`);

    // BR-CO-17: tax = basis x rate / 100 (tolerance 1 currency unit, as the Schematron).
    if (basis && calc) {
      if (!rate) {
        if (!round0(calc).isZero()) fail('BR-CO-17', `VAT category tax amount (BT-117) shall be 0 without a VAT rate (${where}).`);
      } else if (round0(rate).isZero()) {
        if (!round0(calc).isZero()) fail('BR-CO-17', `VAT category tax amount (BT-117) ${calcText} shall be 0 for a 0 % rate (${where}).`);
      } else {
        const expected = round2(basis.abs().times(rate.dividedBy(100)));
        if (!(calc.abs().minus(1).lessThanOrEqualTo(expected) && calc.abs().plus(1).greaterThanOrEqualTo(expected))) {
          fail('BR-CO-17', `VAT category tax amount (BT-117) ${calcText} ≠ taxable amount ${basisText} x ${rateText} % (${where}).`);
        }
      }
    }

    if (!cat || !VAT_CATEGORIES.has(cat)) {
      if (cat) fail('BR-CL-18', `VAT category code ${cat} is not in the EN 16931 subset of UNTDID 5305 (${where}).`);
      continue;
    }
    if (!SUPPORTED_CATEGORIES.has(cat)) {
      fail('X-UNSUPPORTED', `VAT category ${cat} is not verified by this checker (${where}).`);
      continue;
    }
    if (!basis || !calc) continue;
    if (cat === 'S') {
      if (rate) {
        const lineSum = round2(sum(lines.filter((l) => l.category === 'S' && l.rate?.equals(rate) && l.net).map((l) => l.net!)))
          .plus(docLevelSum(true, 'S', rate))
          .minus(docLevelSum(false, 'S', rate));
        if (!basis.equals(lineSum))
          fail(
            'BR-S-08',
            `"Standard rated" taxable amount ${basisText} at ${rateText} % shall equal the sum of line net amounts at that rate ± document level charges/allowances (${lineSum.toFixed(2)}) (${where}).`,
          );
        const expected = round2(basis.abs().times(rate).dividedBy(100));
        if (!(calc.abs().minus(1).lessThan(expected) && calc.abs().plus(1).greaterThan(expected))) {
          fail('BR-S-09', `"Standard rated" tax amount ${calcText} shall equal taxable amount x rate (${expected.toFixed(2)}) (${where}).`);
        }
      }
      if (reasonPresent) fail('BR-S-10', `A "Standard rated" VAT breakdown shall not have an exemption reason (BT-120/BT-121) (${where}).`);
    } else {
      const [p, label] = cat === 'Z' ? ['BR-Z', 'Zero rated'] : cat === 'E' ? ['BR-E', 'Exempt from VAT'] : ['BR-AE', 'Reverse charge'];
      const lineSum = round2(sum(lines.filter((l) => l.category === cat && l.net).map((l) => l.net!)))
        .plus(docLevelSum(true, cat, null))
        .minus(docLevelSum(false, cat, null));
      if (!(basis.minus(1).lessThan(lineSum) && basis.plus(1).greaterThan(lineSum))) {
        fail(`${p}-08`, `"${label}" taxable amount ${basisText} shall equal the sum of "${label}" line net amounts (${lineSum.toFixed(2)}) (${where}).`);
      }
      if (!calc.isZero()) fail(`${p}-09`, `"${label}" VAT category tax amount (BT-117) shall be 0 (${where}).`);
      if (cat === 'Z' && reasonPresent) fail('BR-Z-10', `A "Zero rated" VAT breakdown shall not have an exemption reason (BT-120/BT-121) (${where}).`);
      if (cat !== 'Z' && !reasonPresent)
        fail(`${p}-10`, `A "${label}" VAT breakdown shall have an exemption reason code (BT-121) or text (BT-120) (${where}).`);
    }
  }

  // X-LINE-BREAKDOWN: every (category, rate) used by a line has a breakdown group.
  for (const l of lines) {
    if (!l.category || !SUPPORTED_CATEGORIES.has(l.category)) continue;
    const found = breakdown.some(
      (b) =>
        textAt(b, 'CategoryCode')?.trim() === l.category && (l.category !== 'S' || (num(textAt(b, 'RateApplicablePercent'))?.equals(l.rate ?? -1) ?? false)),
    );
    if (!found) fail('X-LINE-BREAKDOWN', `Line ${l.id} (VAT ${l.category} ${l.rate?.toString() ?? '?'} %) has no matching VAT breakdown (BG-23).`);
  }

  // ---- document totals
  if (!totals) {
    fail('BR-12', 'An Invoice shall have the Sum of Invoice line net amount (BT-106).');
    fail('BR-13', 'An Invoice shall have the Invoice total amount without VAT (BT-109).');
    fail('BR-14', 'An Invoice shall have the Invoice total amount with VAT (BT-112).');
    fail('BR-15', 'An Invoice shall have the Amount due for payment (BT-115).');
  } else {
    const t = (name: string) => textAt(totals, name);
    const lineTotalText = t('LineTotalAmount');
    const basisText = t('TaxBasisTotalAmount');
    const grandText = t('GrandTotalAmount');
    const dueText = t('DuePayableAmount');
    if (lineTotalText === undefined) fail('BR-12', 'An Invoice shall have the Sum of Invoice line net amount (BT-106).');
    if (basisText === undefined) fail('BR-13', 'An Invoice shall have the Invoice total amount without VAT (BT-109).');
    if (grandText === undefined) fail('BR-14', 'An Invoice shall have the Invoice total amount with VAT (BT-112).');
    if (dueText === undefined) fail('BR-15', 'An Invoice shall have the Amount due for payment (BT-115).');

    const taxTotals = kids(totals, 'TaxTotalAmount');
    const taxInCurrency = taxTotals.filter((n) => attr(n, 'currencyID')?.trim() === currency);
    const lineTotal = num(lineTotalText);
    const allowanceText = t('AllowanceTotalAmount');
    const chargeText = t('ChargeTotalAmount');
    const allowance = num(allowanceText) ?? new Decimal(0);
    const charge = num(chargeText) ?? new Decimal(0);
    const basisTotal = num(basisText);
    const grand = num(grandText);
    const prepaid = num(t('TotalPrepaidAmount')) ?? new Decimal(0);
    const rounding = num(t('RoundingAmount')) ?? new Decimal(0);
    const due = num(dueText);

    for (const [name, value] of [
      ['LineTotalAmount', lineTotalText],
      ['TaxBasisTotalAmount', basisText],
      ['GrandTotalAmount', grandText],
      ['DuePayableAmount', dueText],
      ['AllowanceTotalAmount', allowanceText],
      ['ChargeTotalAmount', chargeText],
      ['TotalPrepaidAmount', t('TotalPrepaidAmount')],
      ['RoundingAmount', t('RoundingAmount')],
    ] as const) {
      if (value !== undefined && !num(value)) fail('X-NUMBER', `${name} "${value}" is not a decimal.`);
    }

    if (lineTotal) {
      const lineSum = round2(sum(lines.filter((l) => l.net).map((l) => l.net!)));
      if (!lineTotal.equals(lineSum))
        fail('BR-CO-10', `Sum of Invoice line net amount (BT-106) ${lineTotalText} ≠ Σ Invoice line net amount (BT-131) = ${lineSum.toFixed(2)}.`);
    }
    const indicator = (n: XNode) => textAt(n, 'ChargeIndicator/Indicator')?.trim();
    const headerSum = (isCharge: boolean) =>
      round2(sum(headerAllowanceCharges.filter((n) => (indicator(n) === 'true') === isCharge).map((n) => num(textAt(n, 'ActualAmount')) ?? new Decimal(0))));
    if (allowanceText !== undefined && !allowance.equals(headerSum(false)))
      fail('BR-CO-11', `Sum of allowances on document level (BT-107) ${allowanceText} ≠ Σ Document level allowance amount (BT-92).`);
    if (chargeText !== undefined && !charge.equals(headerSum(true)))
      fail('BR-CO-12', `Sum of charges on document level (BT-108) ${chargeText} ≠ Σ Document level charge amount (BT-99).`);
    if (lineTotal && basisTotal && !basisTotal.equals(round2(lineTotal.minus(allowance).plus(charge)))) {
      fail('BR-CO-13', `Invoice total amount without VAT (BT-109) ${basisText} ≠ line total ${lineTotalText} - allowances + charges.`);
    }
    if (taxInCurrency.length !== 1) {
      fail(
        'BR-CO-15',
        `The Invoice total VAT amount (BT-110) shall be given exactly once with currencyID = invoice currency ${currency ?? '?'} (found ${taxInCurrency.length}).`,
      );
    }
    const taxTotalText = text(taxInCurrency[0]);
    const taxTotal = num(taxTotalText);
    if (taxInCurrency[0]) {
      const calcSum = round2(sum(breakdown.map((b) => num(textAt(b, 'CalculatedAmount')) ?? new Decimal(0))));
      if (!taxTotal?.equals(calcSum))
        fail('BR-CO-14', `Invoice total VAT amount (BT-110) ${taxTotalText} ≠ Σ VAT category tax amount (BT-117) = ${calcSum.toFixed(2)}.`);
      if (decimals(taxTotalText) > 2) fail('BR-DEC-13', 'The Invoice total VAT amount (BT-110) has more than 2 decimals.');
    }
    if (grand && basisTotal && taxTotal && !grand.equals(round2(basisTotal.plus(taxTotal)))) {
      fail('BR-CO-15', `Invoice total amount with VAT (BT-112) ${grandText} ≠ total without VAT ${basisText} + total VAT ${taxTotalText}.`);
    }
    if (due && grand && !due.equals(grand.minus(prepaid).plus(rounding))) {
      fail(
        'BR-CO-16',
        `Amount due for payment (BT-115) ${dueText} ≠ total with VAT ${grandText} - paid amount ${prepaid.toFixed(2)} + rounding ${rounding.toFixed(2)}.`,
      );
    }
    if (due?.greaterThan(0)) {
      const terms = one(settlement, 'SpecifiedTradePaymentTerms');
      if (!one(terms, 'DueDateDateTime') && blank(textAt(terms, 'Description'))) {
        fail(
          'BR-CO-25',
          'In case the Amount due for payment (BT-115) is positive, either the Payment due date (BT-9) or the Payment terms (BT-20) shall be present.',
        );
      }
    }
    if (basisTotal && breakdownBases.length > 0 && !sum(breakdownBases).equals(basisTotal)) {
      fail(
        'X-BREAKDOWN-SUM',
        `Σ VAT category taxable amounts (BT-116) ${sum(breakdownBases).toFixed(2)} ≠ Invoice total amount without VAT (BT-109) ${basisText}.`,
      );
    }
    for (const [rule, name] of [
      ['BR-DEC-09', 'LineTotalAmount'],
      ['BR-DEC-10', 'AllowanceTotalAmount'],
      ['BR-DEC-11', 'ChargeTotalAmount'],
      ['BR-DEC-12', 'TaxBasisTotalAmount'],
      ['BR-DEC-14', 'GrandTotalAmount'],
      ['BR-DEC-16', 'TotalPrepaidAmount'],
      ['BR-DEC-17', 'RoundingAmount'],
      ['BR-DEC-18', 'DuePayableAmount'],
    ] as const) {
      if (decimals(t(name)) > 2) fail(rule, `The allowed maximum number of decimals for ${name} is 2.`);
    }
  }

  // ---- payment instructions
  for (const pm of kids(settlement, 'SpecifiedTradeSettlementPaymentMeans')) {
    const code = textAt(pm, 'TypeCode')?.trim();
    if (blank(code)) {
      fail('BR-49', 'A Payment instruction (BG-16) shall specify the Payment means type code (BT-81).');
      continue;
    }
    if (!PAYMENT_MEANS_CODES.has(code!)) fail('BR-CL-16', `Payment means code ${code} is not in UNTDID 4461 (subset).`);
    if (
      (code === '30' || code === '58') &&
      blank(textAt(pm, 'PayeePartyCreditorFinancialAccount/IBANID')) &&
      blank(textAt(pm, 'PayeePartyCreditorFinancialAccount/ProprietaryID'))
    ) {
      fail('BR-61', 'For credit transfer (BT-81 = 30/58) the Payment account identifier (BT-84) shall be present.');
    }
  }

  for (const ref of kids(settlement, 'InvoiceReferencedDocument')) {
    if (blank(textAt(ref, 'IssuerAssignedID'))) fail('BR-55', 'Each Preceding Invoice reference (BG-3) shall contain a Preceding Invoice reference (BT-25).');
  }

  return out;
}
