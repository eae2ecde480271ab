/**
 * Why the ECB rates feed could not be read. `transient`: trying again later can help (network,
 * time limit, HTTP 5xx/408/429); a feed that is not what the ECB publishes (a DOCTYPE, too large,
 * not well-formed, a rate that is no decimal) is permanent for this run: the next daily run fetches
 * it anew.
 */
export type EcbFeedErrorCode = 'TIMEOUT' | 'NETWORK' | 'HTTP_ERROR' | 'TOO_LARGE' | 'DOCTYPE' | 'MALFORMED';

export class EcbFeedError extends Error {
  readonly transient: boolean;
  readonly code: EcbFeedErrorCode;

  constructor(message: string, opts: { code: EcbFeedErrorCode; transient: boolean; cause?: unknown }) {
    super(message, opts.cause !== undefined ? { cause: opts.cause } : undefined);
    this.name = 'EcbFeedError';
    this.code = opts.code;
    this.transient = opts.transient;
  }
}
