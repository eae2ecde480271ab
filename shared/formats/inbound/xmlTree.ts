/**
 * Hardened XML reading for inbound e-invoices: the text is refused before parsing when it
 * declares a DOCTYPE or entities (external entities read local files or URLs, nested ones expand
 * to gigabytes), when it is too large or holds too many elements; fast-xml-parser then runs with
 * entity processing off, and only the five predefined entities and character references are
 * decoded afterwards, one pass, so nothing can expand into more entities.
 */
import Decimal from 'decimal.js';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { XML_DECLARATION_RE, XML_READER_OPTIONS } from '../xml';
import iconv from 'iconv-lite';

/** Thrown inside the reader and turned into `{ ok: false, reason }` at its edge. */
export class InboundRefusal extends Error {}
export const refuse = (reason: string): never => {
  throw new InboundRefusal(reason);
};

export const MAX_XML_BYTES = 5 * 1024 * 1024;
// A real invoice with thousands of lines has well under 200,000 elements.
const MAX_ELEMENTS = 200_000;

const parser = new XMLParser({
  ...XML_READER_OPTIONS,
  commentPropName: false,
  // Every element is a list, so a reader never has to guess whether one or many came.
  isArray: (_name: string, _jpath: unknown, _isLeaf: boolean, isAttribute: boolean) => !isAttribute,
});

export type XNode = Record<string, unknown>;

export interface ParsedXml {
  /** Local name of the root element. */
  root: string;
  /** Namespace of the root element (its prefix's or the default one), '' without. */
  namespace: string;
  node: XNode;
  /** The decoded XML text, for what needs document order or another parse (the validation report). */
  source: string;
}

function decodeText(bytes: Buffer): string {
  if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) {
    refuse('UTF-16 XML is not accepted; e-invoices are UTF-8');
  }
  const head = bytes.subarray(0, 200).toString('latin1');
  const declared = /^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head)?.[1]?.toLowerCase();
  if (declared === 'iso-8859-1' || declared === 'latin1' || declared === 'windows-1252') return iconv.decode(bytes, declared);
  if (declared && declared !== 'utf-8' && declared !== 'utf8') refuse(`XML encoding ${declared} is not accepted; e-invoices are UTF-8`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    return refuse('the XML is not valid UTF-8');
  }
}

const ROOT_TAG = /^(?:\s|<\?[\s\S]*?\?>|<!--[\s\S]*?-->)*<([A-Za-z_][\w.-]*)(?::([A-Za-z_][\w.-]*))?((?:\s+[^\s=>/]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*\/?>/;

/**
 * Other inbound XML (camt.053 bank statements, docs/bank-statements.md) is read the same way with
 * its own size limits: a statement file may be larger than an invoice.
 */
export interface XmlLimits {
  maxBytes: number;
  maxElements: number;
}

/** Parses inbound XML; refuses (throws InboundRefusal) on anything unsafe or not well-formed. */
export function parseInboundXml(bytes: Buffer, limits: XmlLimits = { maxBytes: MAX_XML_BYTES, maxElements: MAX_ELEMENTS }): ParsedXml {
  if (bytes.length > limits.maxBytes) refuse(`the XML is larger than ${limits.maxBytes / 1024 / 1024} MB`);
  const xml = decodeText(bytes);
  if (XML_DECLARATION_RE.test(xml))
    refuse('the XML declares a DOCTYPE or entities, which no e-invoice or bank statement needs (refused: XXE / entity expansion)');
  const elements = xml.match(/<[A-Za-z_]/g)?.length ?? 0;
  if (elements > limits.maxElements) refuse(`the XML has more than ${limits.maxElements} elements`);
  const wellFormed = XMLValidator.validate(xml);
  if (wellFormed !== true) refuse(`the XML is not well-formed (${wellFormed.err.msg}, line ${wellFormed.err.line})`);
  const tag = ROOT_TAG.exec(xml);
  if (!tag) return refuse('the XML has no root element');
  const [prefix, local] = tag[2] ? [tag[1], tag[2]] : ['', tag[1]];
  const nsAttr = prefix ? `xmlns:${prefix}` : 'xmlns';
  let namespace = '';
  for (const m of (tag[3] ?? '').matchAll(/([^\s=]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    if (m[1] === nsAttr) namespace = m[2] ?? m[3] ?? '';
  }
  let doc: XNode;
  try {
    doc = parser.parse(xml) as XNode;
  } catch (e) {
    // The validator accepts what the parser may still refuse, e.g. nesting deeper than it allows.
    return refuse(`the XML cannot be parsed (${e instanceof Error ? e.message.slice(0, 120) : 'unknown error'})`);
  }
  const rootList = doc[local];
  const node = Array.isArray(rootList) ? rootList[0] : undefined;
  return { root: local, namespace, node: typeof node === 'object' && node !== null ? (node as XNode) : {}, source: xml };
}

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
function decodeEntities(s: string): string {
  return s.replace(/&(lt|gt|amp|quot|apos|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});/g, (all, e: string) => {
    if (e[0] !== '#') return PREDEFINED[e];
    const code = e[1] === 'x' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : all;
  });
}

/** The child elements named `name` (always a list; text-only elements become `{ '#text' }`). */
export function kids(node: XNode | undefined, name: string): XNode[] {
  const list = node?.[name];
  if (!Array.isArray(list)) return [];
  return list.map((c) => (typeof c === 'object' && c !== null ? (c as XNode) : { '#text': String(c) }));
}

/** The first element along a path of child names. */
export function child(node: XNode | undefined, ...path: string[]): XNode | undefined {
  let cur = node;
  for (const name of path) {
    cur = kids(cur, name)[0];
    if (!cur) return undefined;
  }
  return cur;
}

/** Trimmed text of the first element along the path; null when missing or empty. */
export function text(node: XNode | undefined, ...path: string[]): string | null {
  const el = path.length ? child(node, ...path) : node;
  if (!el) return null;
  const raw = el['#text'];
  if (raw === undefined || raw === null) return null;
  const value = decodeEntities(String(raw)).trim();
  return value === '' ? null : value;
}

export function attr(node: XNode | undefined, name: string): string | null {
  const raw = node?.[`@_${name}`];
  if (raw === undefined || raw === null) return null;
  const value = decodeEntities(String(raw)).trim();
  return value === '' ? null : value;
}

const DECIMAL = /^[+-]?(\d{1,20}(\.\d{0,20})?|\.\d{1,20})$/;

/** Significant decimals: trailing zeros do not count ('10.0000' has none). */
function significantDecimals(value: string): number {
  const frac = value.split('.')[1] ?? '';
  return frac.replace(/0+$/, '').length;
}

function normalise(value: string, minDecimals: number): string {
  const d = new Decimal(value);
  const places = Math.max(minDecimals, significantDecimals(value));
  return (d.isZero() ? d.abs() : d).toFixed(places);
}

/**
 * Reads the money amounts and quantities of one document and collects what it warns about.
 * EN 16931 (BR-DEC-*) allows 2 decimals on amounts: 3–4 significant decimals are read with a
 * warning (they still reconcile to the cent or not), more than 4 are refused as not an amount.
 */
export class Numbers {
  readonly warnings: string[] = [];

  amount(value: string | null, what: string): string | null {
    if (value === null) return null;
    if (!DECIMAL.test(value)) refuse(`${what} is not a decimal amount: ${JSON.stringify(value.slice(0, 40))}`);
    const decimals = significantDecimals(value);
    if (decimals > 4) refuse(`${what} has ${decimals} decimals (${value}); EN 16931 allows 2 for amounts`);
    if (decimals > 2) this.warnings.push(`${what} has ${decimals} decimals (${value}); EN 16931 allows 2`);
    return normalise(value, 2);
  }

  requiredAmount(value: string | null, what: string): string {
    const v = this.amount(value, what);
    return v ?? refuse(`${what} is missing`);
  }

  /** Quantities, prices and rates: any precision the syntax allows (20 decimals at most). */
  decimal(value: string | null, what: string): string | null {
    if (value === null) return null;
    if (!DECIMAL.test(value)) refuse(`${what} is not a decimal number: ${JSON.stringify(value.slice(0, 40))}`);
    return normalise(value, 0);
  }
}

/** CII/UBL dates: ISO YYYY-MM-DD, or CII format 102 (YYYYMMDD). */
export function isoDate(value: string | null, what: string): string | null {
  if (value === null) return null;
  const m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(value) ?? /^(\d{4})-(\d{2})-(\d{2})(?:T.*|[+-]\d{2}:\d{2}|Z)$/.exec(value);
  if (!m) return refuse(`${what} is not a date: ${JSON.stringify(value.slice(0, 40))}`);
  const iso = `${m[1]}-${m[2]}-${m[3]}`;
  const d = new Date(`${iso}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== iso) refuse(`${what} is not a calendar date: ${iso}`);
  return iso;
}
