import { DomainError, type ErrorDetail, type ErrorMapping, type ErrorStatuses } from '../errors.ts';

/** A failure as it leaves over HTTP. */
export interface HttpFailure {
  status: number;
  code: string;
  message: string;
  details?: ErrorDetail[] | undefined;
  headers?: Record<string, string>;
}

/** One table from the platform's and every module's; a code mapped two different ways is a bug. */
export function composeErrorStatuses(...tables: ErrorStatuses[]): ErrorStatuses {
  const composed: Record<string, ErrorMapping> = {};
  for (const table of tables) {
    for (const [code, mapping] of Object.entries(table)) {
      if (code in composed && JSON.stringify(composed[code]) !== JSON.stringify(mapping)) {
        throw new Error(`Error code ${code} is mapped to two statuses`);
      }
      composed[code] = mapping;
    }
  }
  return composed;
}

const UNMAPPED = { status: 500, code: 'INTERNAL_ERROR' };

/** The status and wire code of a domain code; an unmapped code is an internal error (500). */
export function wireOf(table: ErrorStatuses, code: string): { status: number; code: string } {
  const mapping = Object.hasOwn(table, code) ? table[code] : undefined;
  if (mapping === undefined) return UNMAPPED;
  return typeof mapping === 'number' ? { status: mapping, code } : mapping;
}

export function toHttpFailure(table: ErrorStatuses, error: DomainError): HttpFailure {
  const wire = wireOf(table, error.code);
  if (wire === UNMAPPED) return { ...UNMAPPED, message: 'Internal server error' };
  return {
    ...wire,
    message: error.message,
    details: error.details,
    ...(error.retryAfterSeconds !== undefined ? { headers: { 'retry-after': String(error.retryAfterSeconds) } } : {}),
  };
}
