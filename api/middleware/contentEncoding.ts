import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { AppError } from '../../shared/errors';

/**
 * Request bodies may be compressed with one of these Content-Encodings (RFC 9110 §8.4); the limit
 * BODY_LIMIT_BYTES applies to the decoded bytes, so a small compressed bomb is a 413. The JSON
 * parser (co-body → inflation) and the raw webhook body (paymentImport/transport.ts) both decode.
 */
export const SUPPORTED_ENCODINGS = ['gzip', 'deflate', 'br'] as const;
export type BodyEncoding = (typeof SUPPORTED_ENCODINGS)[number] | 'identity';

const hasBody = (req: IncomingMessage) => Number(req.headers['content-length'] || 0) > 0 || !!req.headers['transfer-encoding'];

/**
 * Checks the Content-Encoding of a body that is about to be read, before anything reads it, and
 * writes the header back in the one spelling the decoders understand ("GZIP" → "gzip",
 * "x-gzip" → "gzip", "identity" → no header). An encoding we cannot decode — unknown ("foo"),
 * stacked ("gzip, br": nobody sends them, each layer multiplies the work) — is 415 INVALID_INPUT.
 * A request without body bytes has nothing to decode: its header is dropped.
 */
export function acceptContentEncoding(req: IncomingMessage): BodyEncoding {
  const header = req.headers['content-encoding'];
  if (header === undefined) return 'identity';
  const codings = header
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== 'identity')
    .map((c) => (c === 'x-gzip' ? 'gzip' : c));
  if (!codings.length || !hasBody(req)) {
    delete req.headers['content-encoding'];
    return 'identity';
  }
  const [coding] = codings;
  if (codings.length > 1 || !(SUPPORTED_ENCODINGS as readonly string[]).includes(coding)) {
    throw new AppError(
      'INVALID_INPUT',
      415,
      `Unsupported Content-Encoding ${JSON.stringify(header.slice(0, 100))}; send the body uncompressed or with exactly one of ${SUPPORTED_ENCODINGS.join(', ')}`,
    );
  }
  req.headers['content-encoding'] = coding;
  return coding as BodyEncoding;
}

/** The answer to a body whose bytes do not decode with the encoding it declared. */
export const undecodableBody = (encoding: BodyEncoding) =>
  new AppError('INVALID_INPUT', 400, `Request body could not be decoded: it is not valid ${encoding} data (Content-Encoding: ${encoding})`);

/**
 * A zlib/brotli failure while a body was read (Z_BUF_ERROR "unexpected end of file", Z_DATA_ERROR,
 * brotli's "Decompression failed"): the client's bytes, never our fault.
 */
export function isDecodingError(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  return /^Z_/.test(code) || /^ERR_(_ERROR|BROTLI)/.test(code) || (typeof e.errno === 'number' && e.message === 'Decompression failed');
}

/** The decoded byte stream of a request body (the request itself for identity). */
export function decodedBody(req: IncomingMessage, encoding: BodyEncoding): Readable {
  if (encoding === 'identity') return req;
  const decoder = encoding === 'br' ? zlib.createBrotliDecompress() : zlib.createUnzip();
  return req.pipe(decoder);
}
