/**
 * PDF/A-3 associated file added to finished PDF bytes (embedFacturX; renderZugferdPdf has pdfkit
 * write the same objects, pdf/pdfA.ts attachFile), written by hand with pdf-lib's object API rather than its attach():
 * attach() stores the name-tree key and /UF as UTF-16 hex strings, which poppler's pdfdetach
 * cannot select by name and byte-comparing readers may miss. Here an ASCII name stays a plain
 * string, and the stream gets /Params with dates, size and the MD5 checksum PDF/A-3 readers
 * and Factur-X validators look at.
 */
import { createHash } from 'node:crypto';
import { PDFArray, PDFDict, PDFHexString, PDFName, PDFRef, PDFString, type PDFDocument } from '@cantoo/pdf-lib';
import type { AssociatedFile } from '../pdf/pdfA';

export type { AfRelationship, AssociatedFile } from '../pdf/pdfA';

function textString(value: string): PDFString | PDFHexString {
  // Printable ASCII is valid PDFDocEncoding; anything else needs UTF-16.
  return /^[\x20-\x7e]*$/.test(value) ? PDFString.of(value) : PDFHexString.fromText(value);
}

function nameTreeNames(pdf: PDFDocument): PDFArray {
  const ctx = pdf.context;
  let names = pdf.catalog.lookupMaybe(PDFName.of('Names'), PDFDict);
  if (!names) {
    names = ctx.obj({});
    pdf.catalog.set(PDFName.of('Names'), ctx.register(names));
  }
  let files = names.lookupMaybe(PDFName.of('EmbeddedFiles'), PDFDict);
  if (!files) {
    files = ctx.obj({});
    names.set(PDFName.of('EmbeddedFiles'), files);
  }
  let list = files.lookupMaybe(PDFName.of('Names'), PDFArray);
  if (!list) {
    if (files.has(PDFName.of('Kids'))) {
      // Large name trees split into kids; pdfkit and this module only ever write a flat one.
      throw new Error('EmbeddedFiles name tree with /Kids is not supported');
    }
    list = ctx.obj([]);
    files.set(PDFName.of('Names'), list);
  }
  return list;
}

function afArray(pdf: PDFDocument): PDFArray {
  let af = pdf.catalog.lookupMaybe(PDFName.of('AF'), PDFArray);
  if (!af) {
    af = pdf.context.obj([]);
    pdf.catalog.set(PDFName.of('AF'), af);
  }
  return af;
}

function decodeName(obj: unknown): string | null {
  return obj instanceof PDFString || obj instanceof PDFHexString ? obj.decodeText() : null;
}

/** Removes every embedded file called `name` from the name tree and /AF, and drops its objects. */
export function removeAssociatedFile(pdf: PDFDocument, name: string): void {
  const list = nameTreeNames(pdf);
  const af = afArray(pdf);
  for (let i = list.size() - 2; i >= 0; i -= 2) {
    if (decodeName(list.lookup(i)) !== name) continue;
    const specRef = list.get(i + 1);
    list.remove(i + 1);
    list.remove(i);
    if (specRef instanceof PDFRef) {
      const at = af.indexOf(specRef);
      if (at !== undefined) af.remove(at);
      const ef = pdf.context.lookupMaybe(specRef, PDFDict)?.lookupMaybe(PDFName.of('EF'), PDFDict);
      for (const key of ['F', 'UF']) {
        const stream = ef?.get(PDFName.of(key));
        if (stream instanceof PDFRef) pdf.context.delete(stream);
      }
      pdf.context.delete(specRef);
    }
  }
  if (af.size() === 0) pdf.catalog.delete(PDFName.of('AF'));
}

/** Embeds the file, lists it in the EmbeddedFiles name tree and the catalog /AF array. */
export function addAssociatedFile(pdf: PDFDocument, file: AssociatedFile): PDFRef {
  const ctx = pdf.context;
  const stream = ctx.flateStream(file.bytes, {
    Type: 'EmbeddedFile',
    Subtype: file.mimeType,
    Params: {
      Size: file.bytes.length,
      CreationDate: PDFString.fromDate(file.date),
      ModDate: PDFString.fromDate(file.date),
      CheckSum: PDFHexString.of(createHash('md5').update(file.bytes).digest('hex')),
    },
  });
  const streamRef = ctx.register(stream);
  const spec = ctx.obj({
    Type: 'Filespec',
    F: textString(file.name),
    UF: textString(file.name),
    EF: { F: streamRef, UF: streamRef },
    Desc: textString(file.description),
    AFRelationship: file.relationship,
  });
  const specRef = ctx.register(spec);

  const list = nameTreeNames(pdf);
  // Name-tree keys must stay sorted; insert at the right place.
  let at = 0;
  while (at < list.size() && (decodeName(list.lookup(at)) ?? '') < file.name) at += 2;
  list.insert(at, textString(file.name));
  list.insert(at + 1, specRef);
  afArray(pdf).push(specRef);
  return specRef;
}
