/**
 * Every failure of the authorization core carries a machine-readable code; the HTTP layer maps
 * codes to statuses (all of them are client errors, 400).
 */
export type FgaErrorCode =
  | 'DSL_PARSE_ERROR'
  | 'DSL_VALIDATION_ERROR'
  | 'DSL_UNSUPPORTED'
  | 'INVALID_TYPE'
  | 'INVALID_RELATION'
  | 'INVALID_SUBJECT_TYPE'
  | 'VALIDATION_ERROR'
  | 'MAX_DEPTH_EXCEEDED';

export class FgaError extends Error {
  constructor(
    readonly code: FgaErrorCode,
    message: string,
    /** The offending tuple in text form, when a tuple (written or contextual) was rejected. */
    readonly tuple?: string,
  ) {
    super(message);
    this.name = 'FgaError';
  }
}

/** A model uses an OpenFGA feature this service does not implement (conditions, modules, schema 1.0). */
export class DslUnsupportedError extends FgaError {
  constructor(message: string) {
    super('DSL_UNSUPPORTED', message);
    this.name = 'DslUnsupportedError';
  }
}

export function isFgaError(error: unknown, code?: FgaErrorCode): error is FgaError {
  return error instanceof FgaError && (code === undefined || error.code === code);
}
