import { AppError, type ErrorDetail } from '../../errors';

/**
 * Why a tax report cannot be produced as asked. The aggregates are well-formed (that would be a
 * 400 from validation) but the tax rules refuse them, so the API answers 422 and names the reason.
 */
export type TaxReportReason =
  | 'UNSUPPORTED_TAX_RATE'
  | 'UNCLASSIFIED_ZERO_RATED'
  | 'NEGATIVE_KENNZAHL'
  | 'INVALID_TAX_NUMBER'
  | 'INVALID_AMOUNT'
  | 'INVALID_BOOKING'
  | 'PERIOD_NOT_SUPPORTED'
  | 'FOREIGN_CURRENCY'
  | 'ACCOUNT_LENGTH'
  | 'NOTHING_TO_REPORT';

/** extra: further fields for the error envelope (e.g. the documents that block the report). */
export function taxReportError(reason: TaxReportReason, message: string, details?: ErrorDetail[], extra?: Record<string, unknown>): AppError {
  return new AppError('UNPROCESSABLE', 422, message, details, undefined, { ...extra, reason });
}

/** The reason of an error made by taxReportError, for tests and callers that branch on it. */
export function taxReportReason(err: unknown): TaxReportReason | undefined {
  if (err instanceof AppError && err.extra && typeof err.extra.reason === 'string') {
    return err.extra.reason as TaxReportReason;
  }
  return undefined;
}
