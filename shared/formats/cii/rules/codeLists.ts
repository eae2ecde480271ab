/** The code lists the rules check against (subsets; see the module comment of ../en16931Rules.ts). */
import { KNOWN_UNIT_CODES } from '../unitCodes';

// UNTDID 1001 invoice/credit note type codes allowed by EN 16931 (BR-CL-01).
export const DOCUMENT_TYPE_CODES = new Set(
  (
    '71 80 81 82 83 84 102 130 202 203 204 211 218 219 261 262 295 296 308 325 326 331 380 381 382 383 ' +
    '384 385 386 387 388 389 390 393 394 395 396 420 456 457 458 527 532 553 575 623 633 751 780 817 870 875 876 877 935'
  ).split(' '),
);

// ISO 3166-1 alpha-2 plus "1A" (Kosovo) and "EL" (Greek VAT prefix), as in the Schematron.
export const VAT_PREFIXES = new Set(
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
export const COUNTRY_CODES = new Set([...VAT_PREFIXES].filter((c) => c !== '1A' && c !== 'EL'));

// UNTDID 4461 payment means (BR-CL-16), the subset relevant for AT/DE invoicing.
export const PAYMENT_MEANS_CODES = new Set('1 2 3 4 5 10 20 30 31 42 48 49 54 55 57 58 59 68 97 ZZZ'.split(' '));

// UNTDID 5305 subset of EN 16931 (BR-CL-17/18).
export const VAT_CATEGORIES = new Set(['S', 'Z', 'E', 'AE', 'K', 'G', 'O', 'L', 'M', 'B']);
export const SUPPORTED_CATEGORIES = new Set(['S', 'Z', 'E', 'AE', 'K', 'G', 'O']);

// UN/ECE Rec 20/21 (BR-CL-23): the codes we emit plus common ones seen in official samples.
export const UNIT_CODES = new Set([...KNOWN_UNIT_CODES, 'NAR', 'EA', 'XBC', 'XBO', 'XCT', 'XPX', 'XPP', 'KWH', 'P1', 'E48']);

export const CURRENCY_RE = /^[A-Z]{3}$/;
