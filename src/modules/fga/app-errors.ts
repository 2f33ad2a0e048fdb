import { DomainError, domainErrors, type ErrorStatuses } from '../../platform/errors.ts';
import { isFgaError, type FgaErrorCode } from './errors.ts';

/** Codes the authorization context raises, and their HTTP statuses at the edge. */
export const errorStatuses = {
  DSL_PARSE_ERROR: 400,
  DSL_VALIDATION_ERROR: 400,
  INVALID_TYPE: 400,
  INVALID_RELATION: 400,
  INVALID_SUBJECT_TYPE: 400,
  MAX_DEPTH_EXCEEDED: 400,
  NO_ACTIVE_MODEL: 400,
  ALREADY_ACTIVE: 400,
  MODEL_IS_ACTIVE: 400,
  MODEL_EXISTS: 409,
  TUPLE_EXISTS: 409,
  CONSISTENCY_TIMEOUT: 503,
} as const satisfies ErrorStatuses;

export const fgaError = domainErrors(errorStatuses);

/**
 * The authorization core's codes as the service's one error type. DSL_UNSUPPORTED (conditions,
 * modules) is reported as the spec's DSL_PARSE_ERROR: the model's text is what the service cannot
 * read; the message names the construct and its line.
 */
const SPEC_CODES: Record<FgaErrorCode, keyof typeof errorStatuses | 'VALIDATION_ERROR'> = {
  DSL_PARSE_ERROR: 'DSL_PARSE_ERROR',
  DSL_UNSUPPORTED: 'DSL_PARSE_ERROR',
  DSL_VALIDATION_ERROR: 'DSL_VALIDATION_ERROR',
  INVALID_TYPE: 'INVALID_TYPE',
  INVALID_RELATION: 'INVALID_RELATION',
  INVALID_SUBJECT_TYPE: 'INVALID_SUBJECT_TYPE',
  VALIDATION_ERROR: 'VALIDATION_ERROR',
  MAX_DEPTH_EXCEEDED: 'MAX_DEPTH_EXCEEDED',
};

/** Rethrows an FgaError as a DomainError; anything else unchanged. Use as `.catch(asDomainError)`. */
export function asDomainError(error: unknown): never {
  if (isFgaError(error)) throw new DomainError(SPEC_CODES[error.code], error.message);
  throw error;
}

/** Runs synchronous core code (parsing, validation) with the same translation. */
export function translated<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    return asDomainError(error);
  }
}

export const noActiveModel = (): DomainError =>
  fgaError('NO_ACTIVE_MODEL', 'The tenant has no active authorization model; create and activate one first');
