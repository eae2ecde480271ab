import iconv from 'iconv-lite';

/**
 * 8-bit encoding for the U30 and ELSTER writers (both legacy charsets); escaping is shared/formats/xml.ts's.
 */

export type XmlCharset = 'ISO-8859-1' | 'ISO-8859-15';

const ICONV_NAME: Record<XmlCharset, string> = { 'ISO-8859-1': 'latin1', 'ISO-8859-15': 'iso-8859-15' };

/**
 * Encode a serialized XML document in an 8-bit charset. Characters the charset cannot hold are
 * written as numeric character references (&#x20AC;) instead of iconv's "?", so no text is lost
 * and the document stays well-formed. Only call this on markup whose non-ASCII characters are in
 * text or attribute values (ours: names and addresses), where references are legal.
 */
export function encodeXmlDocument(xml: string, charset: XmlCharset): Buffer {
  const name = ICONV_NAME[charset];
  let out = '';
  for (const ch of xml) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x80) {
      out += ch;
      continue;
    }
    const bytes = iconv.encode(ch, name);
    const roundTrip = bytes.length === 1 && iconv.decode(bytes, name) === ch;
    out += roundTrip ? ch : `&#x${cp.toString(16).toUpperCase()};`;
  }
  return iconv.encode(out, name);
}

/** The encoding named in an XML declaration, lower-cased; "utf-8" when there is none. */
export function declaredEncoding(xml: Buffer): string {
  const start = xml[0] === 0xef && xml[1] === 0xbb && xml[2] === 0xbf ? 3 : 0;
  const head = xml.subarray(start, start + 200).toString('latin1');
  const m = /^<\?xml[^?]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head);
  return m ? m[1].toLowerCase() : 'utf-8';
}
