import type { FastifyRequest } from 'fastify';
import { validationError, type DomainError } from '../errors.ts';

/** Deeper than any request of the API needs; deeper input is refused before validation walks it. */
export const MAX_INPUT_DEPTH = 32;

/** NUL (which PostgreSQL text cannot hold) and UTF-16 halves without their partner (not Unicode). */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const TEXT_FLAW = 'Text must not contain NUL characters or unpaired surrogates';

/**
 * Why the value cannot be accepted as text, or null: its own strings and keys at any depth, walked
 * iteratively (values and their depths on two stacks: no pair allocated a member, on every request).
 */
function flaw(value: unknown): string | null {
  if (value === null || typeof value !== 'object') return typeof value === 'string' && UNSTORABLE.test(value) ? TEXT_FLAW : null;
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const current = values.pop();
    const depth = depths.pop()!;
    if (typeof current === 'string') {
      if (UNSTORABLE.test(current)) return TEXT_FLAW;
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH) return `Input is nested deeper than ${MAX_INPUT_DEPTH} levels`;
    for (const key of Object.keys(current)) {
      if (UNSTORABLE.test(key)) return TEXT_FLAW;
      values.push((current as Record<string, unknown>)[key]);
      depths.push(depth + 1);
    }
  }
  return null;
}

const refusal = (part: string, problem: string): DomainError => validationError('Request validation failed', [{ path: part, message: problem }]);

/**
 * For the preValidation hook of every route: text the service could not store or echo back intact,
 * and absurdly deep input, are 400 VALIDATION_ERROR before any schema or handler sees them.
 */
export function unstorableInputRefusal(request: FastifyRequest): DomainError | undefined {
  let problem = flaw(request.params);
  if (problem) return refusal('params', problem);
  problem = flaw(request.query);
  if (problem) return refusal('query', problem);
  problem = flaw(request.body);
  return problem ? refusal('body', problem) : undefined;
}
