import { AppError } from '../../platform/errors.ts';
import { isFgaError, type FgaErrorCode } from './errors.ts';

/**
 * The authorization core's codes as the service's one error type. Every one is a client error
 * (400). DSL_UNSUPPORTED (conditions, modules) is reported as the spec's DSL_PARSE_ERROR: the
 * model's text is what the service cannot read; the message names the construct and its line.
 */
const SPEC_CODES: Record<FgaErrorCode, string> = {
  DSL_PARSE_ERROR: 'DSL_PARSE_ERROR',
  DSL_UNSUPPORTED: 'DSL_PARSE_ERROR',
  DSL_VALIDATION_ERROR: 'DSL_VALIDATION_ERROR',
  INVALID_TYPE: 'INVALID_TYPE',
  INVALID_RELATION: 'INVALID_RELATION',
  INVALID_SUBJECT_TYPE: 'INVALID_SUBJECT_TYPE',
  VALIDATION_ERROR: 'VALIDATION_ERROR',
  MAX_DEPTH_EXCEEDED: 'MAX_DEPTH_EXCEEDED',
};

/** Rethrows an FgaError as AppError 400; anything else unchanged. Use as `.catch(asAppError)`. */
export function asAppError(error: unknown): never {
  if (isFgaError(error)) throw new AppError(SPEC_CODES[error.code], 400, error.message);
  throw error;
}

/** Runs synchronous core code (parsing, validation) with the same translation. */
export function translated<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    return asAppError(error);
  }
}

export const noActiveModel = (): AppError =>
  new AppError('NO_ACTIVE_MODEL', 400, 'The tenant has no active authorization model; create and activate one first');
