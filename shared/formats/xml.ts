/**
 * Tiny XML writer shared by the e-invoice and tax-report writers: a tree (`el(...)`) serialised
 * by `renderXml`, which always escapes text and attribute values and checks names against the
 * XML Name production. Characters XML 1.0 forbids (C0 controls but TAB/LF/CR, lone surrogates,
 * U+FFFE/F) are dropped: a pasted form feed must not make an e-invoice unparseable.
 */

export interface XmlElement {
  readonly name: string;
  readonly attrs: ReadonlyArray<readonly [string, string]>;
  readonly children: ReadonlyArray<XmlElement | string>;
}

/** What `el` accepts as a child: elements, text, and "nothing" for optional parts. */
export type XmlChild = XmlElement | string | null | undefined | false | XmlChild[];

/** Attribute values; `null`/`undefined` attributes are omitted. */
export type XmlAttrs = Record<string, string | number | null | undefined>;

// XML 1.0 Name (ASCII subset is all we ever need, plus an optional prefix).
const NAME_RE = /^[A-Za-z_][A-Za-z0-9._-]*(?::[A-Za-z_][A-Za-z0-9._-]*)?$/;

// Everything XML 1.0 (5th ed.) does not allow as a Char. Lone surrogates are handled separately.
// biome-ignore lint/suspicious/noControlCharactersInRegex: these control characters are exactly what must go
const INVALID_CHARS_RE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
const LONE_SURROGATE_RE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function assertName(name: string): void {
  if (!NAME_RE.test(name)) throw new Error(`Invalid XML name: ${JSON.stringify(name)}`);
}

/** Removes characters that cannot appear in an XML 1.0 document. */
export function stripInvalidXmlChars(value: string): string {
  return value.replace(INVALID_CHARS_RE, '').replace(LONE_SURROGATE_RE, '');
}

/** Escapes character data (element content). CR is kept as a reference so it survives parsing. */
export function escapeText(value: string): string {
  return stripInvalidXmlChars(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#xD;');
}

/** Escapes an attribute value for use inside double quotes (whitespace is kept verbatim). */
export function escapeAttr(value: string): string {
  return stripInvalidXmlChars(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\t/g, '&#x9;')
    .replace(/\n/g, '&#xA;')
    .replace(/\r/g, '&#xD;');
}

function flatten(children: XmlChild[], out: Array<XmlElement | string>): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) flatten(c, out);
    else out.push(c);
  }
}

function isAttrs(value: unknown): value is XmlAttrs {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !('children' in value);
}

/**
 * Builds an element. `el('ram:ID', { schemeID: 'VA' }, vatId)` or `el('ram:Name', name)` or
 * `el('ram:PostalTradeAddress', child1, cond && child2, ...)`. Falsy children are skipped, which
 * is how optional elements are written.
 */
export function el(name: string, attrsOrChild?: XmlAttrs | XmlChild, ...children: XmlChild[]): XmlElement {
  assertName(name);
  const attrs: Array<readonly [string, string]> = [];
  const rest: XmlChild[] = [];
  if (isAttrs(attrsOrChild)) {
    for (const [k, v] of Object.entries(attrsOrChild)) {
      if (v === null || v === undefined) continue;
      assertName(k);
      attrs.push([k, String(v)]);
    }
  } else {
    rest.push(attrsOrChild as XmlChild);
  }
  rest.push(...children);
  const flat: Array<XmlElement | string> = [];
  flatten(rest, flat);
  return { name, attrs, children: flat };
}

/** `optionalEl('ram:LineTwo', value)`: the element when value is a non-blank string, else nothing. */
export function optionalEl(name: string, value: string | null | undefined, attrs?: XmlAttrs): XmlElement | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  return attrs ? el(name, attrs, value) : el(name, value);
}

function renderAttrs(attrs: XmlElement['attrs']): string {
  return attrs.map(([k, v]) => ` ${k}="${escapeAttr(v)}"`).join('');
}

function render(node: XmlElement, depth: number, indent: string, out: string[]): void {
  const pad = indent ? `\n${indent.repeat(depth)}` : '';
  const open = `<${node.name}${renderAttrs(node.attrs)}`;
  if (node.children.length === 0) {
    out.push(`${pad}${open}/>`);
    return;
  }
  const hasElementChild = node.children.some((c) => typeof c !== 'string');
  if (!hasElementChild) {
    // Text-only content is written inline so no indentation whitespace leaks into the value.
    out.push(`${pad}${open}>${node.children.map((c) => escapeText(c as string)).join('')}</${node.name}>`);
    return;
  }
  if (node.children.some((c) => typeof c === 'string')) {
    throw new Error(`Mixed content is not supported (element ${node.name})`);
  }
  out.push(`${pad}${open}>`);
  for (const c of node.children) render(c as XmlElement, depth + 1, indent, out);
  out.push(`${pad}</${node.name}>`);
}

/**
 * Serialises a document: XML declaration (UTF-8) plus the root element, indented with two
 * spaces by default (`indent: ''` writes it on one line).
 */
export function renderXml(root: XmlElement, options: { indent?: string } = {}): string {
  const indent = options.indent ?? '  ';
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  render(root, 0, indent, out);
  if (!indent) out.splice(1, 0, '\n');
  return `${out.join('')}\n`;
}

/**
 * A DOCTYPE or markup declaration in an XML document from outside: none of the formats we read
 * has one, and it can only define entities (external ones read files or URLs, nested ones expand
 * to gigabytes). Readers refuse a document that matches before any parser sees it.
 */
export const XML_DECLARATION_RE = /<!(DOCTYPE|ENTITY|ELEMENT|ATTLIST)/i;

/**
 * The fast-xml-parser options every reader of XML here starts from (inbound e-invoices, bank
 * statements, the ECB feed, the rule checkers): attributes as `@_name`, namespace prefixes
 * removed, values as text (never numbers: amounts stay decimal strings), no entity processing,
 * declarations and processing instructions dropped. Each reader adds its own `isArray`.
 */
export const XML_READER_OPTIONS = {
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
} as const;
