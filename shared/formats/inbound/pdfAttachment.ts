/**
 * The invoice XML embedded in a Factur-X / ZUGFeRD / XRechnung hybrid PDF: the first embedded
 * file (EmbeddedFiles name tree, then the catalog's /AF list) named factur-x.xml,
 * zugferd-invoice.xml, xrechnung.xml or ZUGFeRD-invoice.xml (1.0). Bounded: the PDF may be at most
 * 10 MB, the embedded XML at most 5 MB after decompression, which zlib stops at that size, so a
 * deflate bomb inside the attachment cannot fill memory; every other compressed stream is checked
 * the same way (50 MB each, 200 MB together) before pdf-lib loads the file.
 */
import { inflateSync, constants as zlibConstants } from 'node:zlib';
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFRawStream, PDFString, type PDFObject } from '@cantoo/pdf-lib';
import { MAX_XML_BYTES, refuse } from './xmlTree';

export const MAX_PDF_BYTES = 10 * 1024 * 1024;
const INVOICE_NAMES = ['factur-x.xml', 'zugferd-invoice.xml', 'xrechnung.xml'];
const MAX_NAME_TREE_NODES = 1000;
// pdf-lib inflates the object streams while it loads a PDF, without a limit; these bound what
// any one compressed stream, and all of them together, may expand to before pdf-lib sees the file.
const MAX_STREAM_BYTES = 50 * 1024 * 1024;
const MAX_ALL_STREAMS_BYTES = 200 * 1024 * 1024;

/** Inflates every stream of the raw PDF with zlib's output limit; refuses a deflate bomb. */
function assertStreamsBounded(bytes: Buffer): void {
  let total = 0;
  let at = bytes.indexOf('stream');
  while (at >= 0) {
    let start = at + 'stream'.length;
    if (bytes[start] === 0x0d) start++;
    if (bytes[start] !== 0x0a || (at >= 3 && bytes.toString('latin1', at - 3, at) === 'end')) {
      at = bytes.indexOf('stream', at + 1);
      continue;
    }
    start++;
    const end = bytes.indexOf('endstream', start);
    if (end < 0) return;
    const data = bytes.subarray(start, end);
    // A zlib header (CMF 0x78) marks FlateDecode data; other filters are not inflated by pdf-lib on load.
    if (data[0] === 0x78) {
      try {
        total += inflateSync(data, { maxOutputLength: MAX_STREAM_BYTES, finishFlush: zlibConstants.Z_SYNC_FLUSH }).length;
      } catch (e) {
        if (e instanceof RangeError) refuse('a compressed stream in the PDF expands beyond 50 MB (refused: deflate bomb)');
      }
      if (total > MAX_ALL_STREAMS_BYTES) refuse("the PDF's compressed streams expand beyond 200 MB (refused: deflate bomb)");
    }
    at = bytes.indexOf('stream', end + 'endstream'.length);
  }
}

const nameOf = (o: PDFObject | undefined): string | null => (o instanceof PDFString || o instanceof PDFHexString ? o.decodeText() : null);

function fileSpecs(doc: PDFDocument): Array<{ name: string; spec: PDFDict }> {
  const found: Array<{ name: string; spec: PDFDict }> = [];
  const add = (spec: PDFObject | undefined, key?: string | null) => {
    const dict = spec instanceof PDFDict ? spec : undefined;
    if (!dict) return;
    const name = nameOf(dict.lookup(PDFName.of('UF'))) ?? nameOf(dict.lookup(PDFName.of('F'))) ?? key ?? null;
    if (name) found.push({ name, spec: dict });
  };
  let visited = 0;
  const walk = (node: PDFObject | undefined) => {
    if (!(node instanceof PDFDict) || ++visited > MAX_NAME_TREE_NODES) return;
    const names = node.lookup(PDFName.of('Names'));
    if (names instanceof PDFArray) {
      for (let i = 0; i + 1 < names.size(); i += 2) add(names.lookup(i + 1), nameOf(names.lookup(i)));
    }
    const kidsArr = node.lookup(PDFName.of('Kids'));
    if (kidsArr instanceof PDFArray) for (let i = 0; i < kidsArr.size(); i++) walk(kidsArr.lookup(i));
  };
  const namesDict = doc.catalog.lookup(PDFName.of('Names'));
  if (namesDict instanceof PDFDict) walk(namesDict.lookup(PDFName.of('EmbeddedFiles')));
  const af = doc.catalog.lookup(PDFName.of('AF'));
  if (af instanceof PDFArray) for (let i = 0; i < af.size(); i++) add(af.lookup(i));
  return found;
}

function streamBytes(stream: PDFRawStream, name: string): Buffer {
  const filter = stream.dict.lookup(PDFName.of('Filter'));
  const filters = filter instanceof PDFArray ? filter.asArray().map((f) => String(f)) : filter ? [String(filter)] : [];
  const raw = Buffer.from(stream.getContents());
  if (filters.length === 0) {
    if (raw.length > MAX_XML_BYTES) refuse(`the embedded ${name} is larger than 5 MB`);
    return raw;
  }
  if (filters.length !== 1 || filters[0] !== '/FlateDecode') refuse(`the embedded ${name} uses the filter ${filters.join(' ')}; only FlateDecode is read`);
  try {
    return inflateSync(raw, { maxOutputLength: MAX_XML_BYTES });
  } catch (e) {
    if (e instanceof RangeError) return refuse(`the embedded ${name} is larger than 5 MB once decompressed`);
    return refuse(`the embedded ${name} cannot be decompressed`);
  }
}

/** The embedded invoice XML and its file name; refuses when the PDF has none. */
export async function extractInvoiceXml(bytes: Buffer): Promise<{ name: string; xml: Buffer }> {
  if (bytes.length > MAX_PDF_BYTES) refuse('the PDF is larger than 10 MB');
  assertStreamsBounded(bytes);
  let doc: PDFDocument;
  try {
    doc = await PDFDocument.load(new Uint8Array(bytes), { updateMetadata: false, ignoreEncryption: false, throwOnInvalidObject: true });
  } catch (e) {
    return refuse(`the PDF cannot be read (${e instanceof Error ? e.message.slice(0, 120) : 'unknown error'})`);
  }
  const specs = fileSpecs(doc);
  const match = INVOICE_NAMES.map((n) => specs.find((s) => s.name.toLowerCase() === n)).find((s) => s !== undefined);
  if (!match) {
    const names = [...new Set(specs.map((s) => s.name))];
    return refuse(
      names.length
        ? `the PDF has no embedded invoice XML (factur-x.xml, zugferd-invoice.xml, xrechnung.xml); it embeds ${names.slice(0, 5).join(', ')}`
        : 'the PDF has no embedded files, so it is not a Factur-X / ZUGFeRD e-invoice',
    );
  }
  const ef = match.spec.lookup(PDFName.of('EF'));
  const stream = ef instanceof PDFDict ? (ef.lookup(PDFName.of('UF')) ?? ef.lookup(PDFName.of('F'))) : undefined;
  if (!(stream instanceof PDFRawStream)) return refuse(`the PDF's ${match.name} has no file stream`);
  return { name: match.name, xml: streamBytes(stream, match.name) };
}
