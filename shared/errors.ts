/**
 * One error type for the whole service. Everything a client sees is an AppError rendered into
 * the spec's envelope { error: { message, code, status, details } } by api/middleware/errorHandler.ts;
 * anything else becomes 500 INTERNAL_ERROR with a generic message.
 */
export type ErrorCode =
  | 'INVALID_INPUT'
  | 'MISSING_FIELD'
  | 'INVALID_FORMAT'
  | 'NOT_FOUND'
  | 'UNAUTHORIZED'
  | 'TOKEN_EXPIRED'
  | 'FORBIDDEN'
  | 'RATE_LIMITED'
  | 'DUPLICATE'
  | 'PLAN_LIMIT'
  | 'IMMUTABLE'
  | 'DEPENDENCY'
  | 'UNPROCESSABLE'
  | 'PROVIDER_ERROR'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_ERROR';

export interface ErrorDetail {
  field: string;
  message: string;
}

/**
 * An answer lists at most this many details; `error.detailsOmitted` counts the rest
 * (api/middleware/errorHandler.ts), so a refusal stays small whatever the request was.
 */
export const MAX_DETAILS = 20;

export class AppError extends Error {
  constructor(
    public readonly code: ErrorCode,
    public readonly status: number,
    message: string,
    public readonly details?: ErrorDetail[],
    /** Extra response headers, e.g. Retry-After for 429/503. */
    public readonly headers?: Record<string, string>,
    /** Extra fields merged into error (e.g. computed vs expected totals on 422). */
    public readonly extra?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const invalidInput = (message: string, details?: ErrorDetail[]) => new AppError('INVALID_INPUT', 400, message, details);
export const missingField = (field: string) => new AppError('MISSING_FIELD', 400, `${field} is required`, [{ field, message: 'is required' }]);
export const notFound = (what = 'Resource') => new AppError('NOT_FOUND', 404, `${what} not found`);
export const unauthorized = (message = 'Authentication required') => new AppError('UNAUTHORIZED', 401, message);
export const tokenExpired = () => new AppError('TOKEN_EXPIRED', 401, 'Access token expired; refresh it');
export const forbidden = (message = 'Your role does not permit this operation') => new AppError('FORBIDDEN', 403, message);
export const planLimit = (message = 'Your plan does not include this feature') => new AppError('PLAN_LIMIT', 403, message);
export const duplicate = (message = 'A resource with the same unique identifier exists') => new AppError('DUPLICATE', 409, message);
export const immutable = (message: string) => new AppError('IMMUTABLE', 400, message);
export const dependency = (message: string) => new AppError('DEPENDENCY', 400, message);
export const unprocessable = (message: string, extra?: Record<string, unknown>, details?: ErrorDetail[]) =>
  new AppError('UNPROCESSABLE', 422, message, details, undefined, extra);
export const rateLimited = (retryAfterSec: number, message = 'Too many requests') =>
  new AppError('RATE_LIMITED', 429, message, undefined, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSec))) });
export const serviceUnavailable = (message: string, retryAfterSec = 5) =>
  new AppError('SERVICE_UNAVAILABLE', 503, message, undefined, { 'Retry-After': String(retryAfterSec) });
export const providerError = (message: string) => new AppError('PROVIDER_ERROR', 502, message);

/** Postgres error codes we translate instead of leaking (objection-db-errors style, without the dependency). */
export function fromDatabaseError(err: unknown): AppError | null {
  const e = err as { code?: string; constraint?: string; detail?: string; nativeError?: { code?: string } };
  const code = e?.code ?? e?.nativeError?.code;
  switch (code) {
    case '23505':
      return duplicate();
    case '40P01':
    case '40001':
      // A deadlock or serialization failure: PostgreSQL rolled the transaction back; running the
      // same request again succeeds. Not a 500: the client should retry.
      return serviceUnavailable('The request collided with a concurrent change; please retry', 1);
    case '23503':
      return invalidInput('A referenced resource does not exist');
    case '23502':
      return invalidInput('A required value is missing');
    case '23514':
      return invalidInput('A value is outside its allowed range');
    case '22P02':
    case '22007':
    case '22008':
    case '22003':
    case '22001':
      return invalidInput('A value has an invalid format or is out of range');
    case '22021':
    case '22P05':
      // U+0000 in text or jsonb; validate() refuses it first, this covers input it does not see.
      return invalidInput('A text contains a character that cannot be stored (U+0000)');
    default:
      return null;
  }
}
