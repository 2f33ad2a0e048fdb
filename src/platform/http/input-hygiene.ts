import type { FastifyRequest } from 'fastify';
import { validationError, type DomainError } from '../errors.ts';

/** Deeper than any request of the API needs; deeper input is refused before validation walks it. */
export const MAX_INPUT_DEPTH = 32;

/** NUL (which PostgreSQL text cannot hold) and UTF-16 halves without their partner (not Unicode). */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why the value cannot be accepted as text, or null: its own strings and keys at any depth, walked iteratively. */
function flaw(value: unknown): string | null {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (typeof current === 'string') {
      if (UNSTORABLE.test(current)) return 'Text must not contain NUL characters or unpaired surrogates';
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH) return `Input is nested deeper than ${MAX_INPUT_DEPTH} levels`;
    for (const [key, member] of Object.entries(current)) {
      if (UNSTORABLE.test(key)) return 'Text must not contain NUL characters or unpaired surrogates';
      pending.push([member, depth + 1]);
    }
  }
  return null;
}

/**
 * For the preValidation hook of every route: text the service could not store or echo back intact,
 * and absurdly deep input, are 400 VALIDATION_ERROR before any schema or handler sees them.
 */
export function unstorableInputRefusal(request: FastifyRequest): DomainError | undefined {
  for (const [part, value] of [['params', request.params], ['query', request.query], ['body', request.body]] as const) {
    const problem = flaw(value);
    if (problem) return validationError('Request validation failed', [{ path: part, message: problem }]);
  }
  return undefined;
}
