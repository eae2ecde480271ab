/**
 * A failure talking to the FinanzOnline web services. `transient` says whether trying again later
 * can help (network, timeouts, HTTP 5xx, maintenance, an expired session); permanent failures need
 * a human. Messages never contain credentials or the uploaded document; `portalMessage` is BMF's
 * own text, kept verbatim for the submission record.
 */
export type PortalErrorCode =
  | 'TIMEOUT'
  | 'NETWORK'
  | 'HTTP_ERROR'
  | 'SOAP_FAULT'
  | 'BAD_RESPONSE'
  | 'MAINTENANCE'
  | 'TECHNICAL_ERROR'
  | 'SESSION_INVALID'
  | 'AUTH_FAILED'
  | 'USER_LOCKED'
  | 'NOT_WEBSERVICE_USER'
  | 'NOT_AUTHORISED'
  | 'XML_REJECTED'
  | 'CONTENT_NOT_PERMITTED'
  | 'INVALID_REQUEST'
  | 'PORTAL_ERROR';

export class PortalError extends Error {
  readonly transient: boolean;
  readonly code?: PortalErrorCode;
  /** FinanzOnline return code (rc), when the portal answered with one. */
  readonly rc?: number;
  readonly httpStatus?: number;
  /** The portal's msg text, verbatim. */
  readonly portalMessage?: string;

  constructor(
    message: string,
    opts: { transient: boolean; code?: PortalErrorCode; rc?: number; httpStatus?: number; portalMessage?: string; cause?: unknown },
  ) {
    super(message, opts.cause !== undefined ? { cause: opts.cause } : undefined);
    this.name = 'PortalError';
    this.transient = opts.transient;
    this.code = opts.code;
    this.rc = opts.rc;
    this.httpStatus = opts.httpStatus;
    this.portalMessage = opts.portalMessage;
  }
}

/** Session service rc values (BMF Session Webservice). */
export function sessionRcError(rc: number, msg: string | undefined): PortalError {
  const base = { rc, portalMessage: msg };
  switch (rc) {
    case -1:
      return new PortalError('FinanzOnline session invalid or expired', { ...base, transient: true, code: 'SESSION_INVALID' });
    case -2:
      return new PortalError('FinanzOnline is in maintenance', { ...base, transient: true, code: 'MAINTENANCE' });
    case -3:
      return new PortalError('FinanzOnline technical error', { ...base, transient: true, code: 'TECHNICAL_ERROR' });
    case -4:
      return new PortalError('FinanzOnline rejected the credentials (Teilnehmer-ID, Benutzer-ID or PIN)', { ...base, transient: false, code: 'AUTH_FAILED' });
    case -5:
      return new PortalError('FinanzOnline user is locked after failed logins', { ...base, transient: false, code: 'USER_LOCKED' });
    case -6:
      return new PortalError('FinanzOnline user is locked', { ...base, transient: false, code: 'USER_LOCKED' });
    case -7:
      return new PortalError('FinanzOnline user is not a web service user', { ...base, transient: false, code: 'NOT_WEBSERVICE_USER' });
    case -8:
      return new PortalError('FinanzOnline participant is locked or not authorised for web services', { ...base, transient: false, code: 'NOT_AUTHORISED' });
    default:
      return new PortalError(`FinanzOnline session service answered rc ${rc}`, { ...base, transient: false, code: 'PORTAL_ERROR' });
  }
}

/** Fileupload service rc values (BMF File Upload Webservice). */
export function uploadRcError(rc: number, msg: string | undefined): PortalError {
  const base = { rc, portalMessage: msg };
  switch (rc) {
    case -1:
    case -2:
    case -3:
      return sessionRcError(rc, msg);
    case -4:
      return new PortalError(`FinanzOnline rejected the file (XML error)${msg ? `: ${msg}` : ''}`, { ...base, transient: false, code: 'XML_REJECTED' });
    case -5:
      return new PortalError(`FinanzOnline does not permit this content${msg ? `: ${msg}` : ''}`, { ...base, transient: false, code: 'CONTENT_NOT_PERMITTED' });
    default:
      return new PortalError(`FinanzOnline fileupload answered rc ${rc}${msg ? `: ${msg}` : ''}`, { ...base, transient: false, code: 'PORTAL_ERROR' });
  }
}
