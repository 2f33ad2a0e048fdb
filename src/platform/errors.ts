export interface ErrorDetail {
  path: string;
  message: string;
}

/**
 * The one error type of the service: a machine-readable code, a safe message, and optional
 * details. It carries no HTTP: the edge maps codes to statuses (src/platform/http/error-statuses.ts).
 */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
    /** Seconds after which trying again can succeed (a lockout, a rate limit, a lagging index). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/**
 * How a code leaves over HTTP: its status, or its status and the code the contract names (two
 * domain codes may share one wire code, e.g. an invalid e-mail link and an invalid access token).
 */
export type ErrorMapping = number | { status: number; code: string };
export type ErrorStatuses = Readonly<Record<string, ErrorMapping>>;

/** A raiser typed by a module's table, so a module can only raise codes its table maps. */
export const domainErrors =
  <Table extends ErrorStatuses>(_table: Table) =>
  (code: keyof Table & string, message: string, details?: ErrorDetail[], retryAfterSeconds?: number): DomainError =>
    new DomainError(code, message, details, retryAfterSeconds);

/** Codes of the platform: generic ones every module may raise, and the HTTP layer's own. */
export const platformErrorStatuses = {
  VALIDATION_ERROR: 400,
  BAD_REQUEST: 400,
  MISSING_TENANT: 400,
  TOKEN_INVALID: 401,
  TOKEN_EXPIRED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  TENANT_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  /** An append that fits no event schema: a programming error, refused before anything is written. */
  EVENT_SCHEMA_VIOLATION: 500,
  REQUEST_TIMEOUT: 503,
  /** PostgreSQL cannot be reached right now (src/platform/db/unavailable.ts); Retry-After: 1. */
  SERVICE_UNAVAILABLE: 503,
} as const satisfies ErrorStatuses;

export const platformError = domainErrors(platformErrorStatuses);

export const notFound = (what = 'Resource'): DomainError => platformError('NOT_FOUND', `${what} not found`);

export const validationError = (message: string, details?: ErrorDetail[]): DomainError => platformError('VALIDATION_ERROR', message, details);

export const conflict = (message: string): DomainError => platformError('CONFLICT', message);
