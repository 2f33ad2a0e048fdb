import { z } from 'zod';
import { errorBodySchemas } from '../envelopes.ts';
import { ruleFor, type RouteRule } from './tiers.ts';

interface Operation {
  responses?: Record<string, unknown>;
}
interface OpenApiDocument {
  paths?: Record<string, Record<string, Operation | unknown>>;
  components?: Record<string, Record<string, unknown> | undefined>;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const LIMIT_HEADERS = {
  'X-RateLimit-Limit': header('X-RateLimit-Limit'),
  'X-RateLimit-Remaining': header('X-RateLimit-Remaining'),
  'X-RateLimit-Reset': header('X-RateLimit-Reset'),
};

const integerHeader = (description: string) => ({ description, schema: { type: 'integer' } });
const HEADERS = {
  'X-RateLimit-Limit': integerHeader('Requests admitted per sliding window of this route tier'),
  'X-RateLimit-Remaining': integerHeader('Requests still admitted now (the strictest of the keys counted: address, user, account)'),
  'X-RateLimit-Reset': integerHeader('Unix seconds at which every request counted so far has left the window'),
  'Retry-After': integerHeader('Seconds until the next request is admitted'),
};

const TOO_MANY_REQUESTS = {
  description:
    'Rate limit exceeded (tiers in docs/decisions.md). The body is the route family\'s error envelope: ' +
    '`{ok: false, error: {code: "RATE_LIMITED", message}}`; the OAuth token endpoint answers `{error: "invalid_request", error_description}`.',
  headers: { ...LIMIT_HEADERS, 'Retry-After': header('Retry-After') },
  content: {
    // The error body of the limited route's family (canonical, v1, {success: false}, OAuth).
    'application/json': { schema: { anyOf: (['canonical', 'v1', 'success', 'oauth'] as const).map((family) => z.toJSONSchema(errorBodySchemas[family])) } },
  },
};

/**
 * Adds the rate-limit headers to every response of each limited operation, and its 429 response,
 * as shared components: routes declare nothing themselves (the tier table decides).
 */
export function documentRateLimits<Document extends object>(generated: Document, rules: readonly RouteRule[]): Document {
  const document = generated as OpenApiDocument;
  document.components = {
    ...document.components,
    headers: { ...document.components?.headers, ...HEADERS },
    responses: { ...document.components?.responses, TooManyRequests: TOO_MANY_REQUESTS },
  };
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.has(method) || !ruleFor(rules, method.toUpperCase(), path)?.tier) continue;
      const responses = ((operation as Operation).responses ??= {});
      for (const response of Object.values(responses) as { $ref?: string; headers?: Record<string, unknown> }[]) {
        if (!response.$ref) response.headers = { ...response.headers, ...LIMIT_HEADERS };
      }
      responses['429'] = { $ref: '#/components/responses/TooManyRequests' };
    }
  }
  return generated;
}
