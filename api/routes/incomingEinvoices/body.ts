import type { Middleware } from 'koa';
import { AppError } from '../../../shared/errors';
import { acceptContentEncoding, decodedBody, undecodableBody } from '../../middleware/contentEncoding';

/** An e-invoice file may be larger than a JSON body: the reader's own PDF limit. */
export const MAX_EINVOICE_BYTES = 10 * 1024 * 1024;

/** The media types an upload may declare; the reader recognises the format from the bytes. */
export const EINVOICE_MEDIA_TYPES = ['application/xml', 'text/xml', 'application/pdf'] as const;

/**
 * Read the uploaded file as raw bytes into ctx.state.upload (the JSON parser of api/app.ts
 * leaves these types alone). 415 for another type — multipart/form-data included: send the file
 * itself as the body —, 413 past 10 MB (a declared Content-Length before reading, a stream as
 * it grows). A compressed body is decoded first; the limit counts decoded bytes.
 */
export const readEinvoiceUpload: Middleware = async (ctx, next) => {
  const mediaType = ctx.is(...EINVOICE_MEDIA_TYPES);
  if (!mediaType) {
    const sent = ctx.get('Content-Type') || '(none)';
    const hint = ctx.is('multipart/form-data') ? ': multipart uploads are not supported, send the file itself as the request body' : '';
    throw new AppError('INVALID_INPUT', 415, `Unsupported content type ${sent}${hint}; send application/xml, text/xml or application/pdf`);
  }
  const tooLarge = () => new AppError('INVALID_INPUT', 413, `The file exceeds the limit of ${MAX_EINVOICE_BYTES} bytes`);
  if (Number(ctx.get('Content-Length') || 0) > MAX_EINVOICE_BYTES) throw tooLarge();
  const encoding = acceptContentEncoding(ctx.req);
  const source = decodedBody(ctx.req, encoding);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source) {
      size += (chunk as Buffer).length;
      if (size > MAX_EINVOICE_BYTES) {
        // The rest is discarded as it comes; the error answer closes the connection.
        ctx.req.resume();
        throw tooLarge();
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (source !== ctx.req) throw undecodableBody(encoding);
    throw new AppError('INVALID_INPUT', 400, `Request body could not be read: ${(err as Error).message}`);
  }
  if (size === 0) throw new AppError('INVALID_INPUT', 400, 'The request body is empty: send the e-invoice file as the body');
  ctx.state.upload = { bytes: Buffer.concat(chunks, size), mediaType };
  await next();
};
