import os from 'node:os';
import { Transform, Writable, finished } from 'node:stream';
import type { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { AppError } from '../../../shared/errors';
import { sniffEInvoice } from '../../../shared/formats/inbound/readEInvoice';
import { acceptContentEncoding, decodedBody, undecodableBody } from '../../middleware/contentEncoding';

/** An e-invoice file may be larger than a JSON body: the reader's own PDF limit. */
export const MAX_EINVOICE_BYTES = 10 * 1024 * 1024;

/** The media types an upload may declare; the reader recognises the format from the bytes. */
export const EINVOICE_MEDIA_TYPES = ['application/xml', 'text/xml', 'application/pdf'] as const;

/** The form field that carries the file of a multipart upload. */
export const FILE_FIELD = 'file';

/**
 * A multipart body is the file plus boundaries, part headers and perhaps a few small fields: this
 * much beyond the file's 10 MB is allowed, and no more is read (formidable does not bound part
 * headers itself).
 */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
const MAX_FORM_FIELDS = 10;
const MAX_FORM_FIELDS_BYTES = 16 * 1024;

type Upload = { bytes: Buffer; mediaType: string };

/**
 * What one kind of upload accepts: the e-invoice upload below, and the bank statement upload
 * (api/routes/bankStatements) through the same reader with its own limit, types and sniffing.
 */
export interface UploadSpec {
  maxBytes: number;
  /** The media types the body itself may declare. */
  mediaTypes: readonly string[];
  /** The types as the 415 answer names them ("application/xml, text/xml or application/pdf"). */
  typesText: string;
  /** What the file is, for messages ("the e-invoice file"). */
  what: string;
  /** A form file's media type from its bytes when its part type is not one of mediaTypes; null → 415. */
  sniff: (bytes: Buffer) => string | null;
  /** The 415 text for a form file whose bytes sniff nothing ("neither XML nor PDF; send an XML or PDF e-invoice"). */
  sniffRefusal: string;
}

const tooLarge = (spec: UploadSpec) => new AppError('INVALID_INPUT', 413, `The file exceeds the limit of ${spec.maxBytes} bytes`);

const EINVOICE_UPLOAD: UploadSpec = {
  maxBytes: MAX_EINVOICE_BYTES,
  mediaTypes: EINVOICE_MEDIA_TYPES,
  typesText: 'application/xml, text/xml or application/pdf',
  what: 'the e-invoice file',
  sniff: (bytes) => {
    const kind = sniffEInvoice(bytes);
    return kind === 'pdf' ? 'application/pdf' : kind === 'xml' ? 'application/xml' : null;
  },
  sniffRefusal: 'neither XML nor PDF; send an XML or PDF e-invoice',
};

/**
 * Read the uploaded file into ctx.state.upload: either the body itself (one of spec.mediaTypes;
 * the JSON parser of api/app.ts leaves these alone) or the field `file` of a multipart/form-data
 * body. Any other type 415; 413 past the limit (a declared Content-Length before reading, a stream
 * as it grows). A compressed body is decoded first; the limit counts decoded bytes.
 */
export const fileUpload =
  (spec: UploadSpec): Middleware =>
  async (ctx, next) => {
    ctx.state.upload = ctx.is('multipart/form-data') ? await readMultipart(ctx, spec) : await readRaw(ctx, spec);
    await next();
  };

/** The e-invoice upload: XML or PDF, at most 10 MB. */
export const readEinvoiceUpload: Middleware = fileUpload(EINVOICE_UPLOAD);

async function readRaw(ctx: Context, spec: UploadSpec): Promise<Upload> {
  const mediaType = ctx.is(...spec.mediaTypes);
  if (!mediaType) {
    const sent = ctx.get('Content-Type') || '(none)';
    throw new AppError(
      'INVALID_INPUT',
      415,
      `Unsupported content type ${sent}; send ${spec.typesText} as the body, or multipart/form-data with the file in the field "${FILE_FIELD}"`,
    );
  }
  if (Number(ctx.get('Content-Length') || 0) > spec.maxBytes) throw tooLarge(spec);
  const encoding = acceptContentEncoding(ctx.req);
  const source = decodedBody(ctx.req, encoding);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source) {
      size += (chunk as Buffer).length;
      if (size > spec.maxBytes) {
        // The rest is discarded as it comes; the error answer closes the connection.
        ctx.req.resume();
        throw tooLarge(spec);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (source !== ctx.req) throw undecodableBody(encoding);
    throw new AppError('INVALID_INPUT', 400, `Request body could not be read: ${(err as Error).message}`);
  }
  if (size === 0) throw new AppError('INVALID_INPUT', 400, `The request body is empty: send ${spec.what} as the body`);
  return { bytes: Buffer.concat(chunks, size), mediaType };
}

/**
 * multipart/form-data through koa-body (formidable), the parser the app already has, configured so
 * that nothing touches the disk: `fileWriteStreamHandler` collects the file in memory (formidable
 * would otherwise write every file part to a temp file in os.tmpdir()), at most 10 MB of file data
 * (`maxTotalFileSize` is checked per chunk, `maxFileSize` only at the part's end), one file, a few
 * small fields. formidable does not bound part headers, so it reads the body through a counting
 * stream that stops at 10 MB + 64 KB. Only the field `file` is kept; a file in any other field is
 * refused rather than ignored (the client meant something by it). Its filename is never used.
 */
async function readMultipart(ctx: Context, spec: UploadSpec): Promise<Upload> {
  const limit = spec.maxBytes + MULTIPART_OVERHEAD_BYTES;
  if (Number(ctx.get('Content-Length') || 0) > limit) throw tooLarge(spec);
  const encoding = acceptContentEncoding(ctx.req);
  const decoded = decodedBody(ctx.req, encoding);

  let read = 0;
  const bounded = new Transform({
    transform(chunk: Buffer, _enc, done) {
      read += chunk.length;
      if (read > limit) done(tooLarge(spec));
      else done(null, chunk);
    },
  });
  // formidable takes the headers from the stream it parses; a client that goes away or a body
  // that does not decode ends the parse with an error instead of leaving it waiting.
  Object.assign(bounded, { headers: ctx.req.headers });
  finished(ctx.req, (err) => {
    if (err) bounded.destroy(new AppError('INVALID_INPUT', 400, 'The upload was aborted before its end'));
  });
  if (decoded !== ctx.req) decoded.on('error', () => bounded.destroy(undecodableBody(encoding)));
  decoded.pipe(bounded);

  const files: { mimetype: string | null; chunks: Buffer[] }[] = [];
  const otherFileFields = new Set<string>();
  const parse = koaBody({
    multipart: true,
    json: false,
    urlencoded: false,
    text: false,
    formidable: {
      maxFiles: 1,
      maxFileSize: spec.maxBytes,
      maxTotalFileSize: spec.maxBytes,
      maxFields: MAX_FORM_FIELDS,
      maxFieldsSize: MAX_FORM_FIELDS_BYTES,
      allowEmptyFiles: true,
      minFileSize: 0,
      // Never written to (fileWriteStreamHandler below); named so the tests can watch it.
      uploadDir: os.tmpdir(),
      // `curl -F 'file=<invoice.xml'` sends the file as a part without a type: still the file.
      onPart: (part, handle) => {
        if (part.name === FILE_FIELD && !part.mimetype) part.mimetype = 'application/octet-stream';
        handle(part);
      },
      filter: (part) => {
        if (part.name === FILE_FIELD) return true;
        otherFileFields.add(String(part.name ?? '').slice(0, 100));
        return false;
      },
      fileWriteStreamHandler: (file) => {
        // formidable hands over its VolatileFile, which carries the part's Content-Type.
        const entry = { mimetype: (file as { mimetype?: string | null } | undefined)?.mimetype ?? null, chunks: [] as Buffer[] };
        files.push(entry);
        return new Writable({
          write(chunk: Buffer, _enc, done) {
            entry.chunks.push(chunk);
            done();
          },
        });
      },
    },
    onError: (err) => {
      throw multipartError(err, spec);
    },
  });
  // koa-body parses ctx.req: it is handed a view of the context whose req is the bounded stream.
  const view = Object.create(ctx, { req: { value: bounded } }) as Context;
  try {
    await parse(view, async () => undefined);
  } finally {
    // Whatever formidable left unread is discarded as it comes, so the error answer can be sent.
    decoded.unpipe(bounded);
    decoded.resume();
    ctx.req.resume();
  }

  const others = [...otherFileFields].map((n) => JSON.stringify(n)).join(', ');
  if (others) {
    throw new AppError('INVALID_INPUT', 400, `Unexpected file field ${others}: send exactly one file, in the field "${FILE_FIELD}"`);
  }
  const [file] = files;
  if (!file) throw new AppError('INVALID_INPUT', 400, `The multipart body has no field "${FILE_FIELD}": send ${spec.what} in it`);
  const bytes = Buffer.concat(file.chunks);
  if (bytes.length === 0) throw new AppError('INVALID_INPUT', 400, `The file in the field "${FILE_FIELD}" is empty`);
  return { bytes, mediaType: fileMediaType(file.mimetype, bytes, spec) };
}

/**
 * The part's own type when it is one of ours; otherwise (application/octet-stream, a browser's
 * guess) the bytes decide, as the reader recognises the format from them. What is neither XML
 * nor PDF is 415, as on the body upload.
 */
function fileMediaType(declared: string | null, bytes: Buffer, spec: UploadSpec): string {
  const type = (declared ?? '').split(';')[0].trim().toLowerCase();
  if (spec.mediaTypes.includes(type)) return type;
  const sniffed = spec.sniff(bytes);
  if (sniffed) return sniffed;
  throw new AppError(
    'INVALID_INPUT',
    415,
    `The file in the field "${FILE_FIELD}" is ${JSON.stringify(type || 'untyped')} and its content is ${spec.sniffRefusal}`,
  );
}

/** formidable's refusals in our envelope; its codes are those of formidable/src/FormidableError.js. */
function multipartError(err: Error, spec: UploadSpec): AppError {
  if (err instanceof AppError) return err;
  const code = (err as { code?: unknown }).code;
  switch (code) {
    case 1009: // biggerThanTotalMaxFileSize
    case 1016: // biggerThanMaxFileSize
      return tooLarge(spec);
    case 1015: // maxFilesExceeded
      return new AppError('INVALID_INPUT', 400, `Send exactly one file, in the field "${FILE_FIELD}"`);
    case 1006: // maxFieldsSizeExceeded
    case 1007: // maxFieldsExceeded
      return new AppError(
        'INVALID_INPUT',
        413,
        `Besides the file the form may carry at most ${MAX_FORM_FIELDS} fields of ${MAX_FORM_FIELDS_BYTES} bytes together`,
      );
    default:
      return new AppError('INVALID_INPUT', 400, `The multipart body could not be read: ${err.message.slice(0, 200)}`);
  }
}
