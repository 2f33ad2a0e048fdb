import type { FastifyReply, FastifyRequest } from 'fastify';
import { z, type ZodType } from 'zod';
import { ok, okList, pagination, v1List } from './envelopes.ts';
import type { HttpServer } from './server.ts';

/** What a handler produced, before the legacy or v1 layer gives it its envelope. */
export type HandlerResult =
  | { kind: 'item'; status?: 201; data: unknown }
  | { kind: 'all'; items: unknown[] } // no native paging (tenants, roles, groups)
  | { kind: 'page'; items: unknown[]; page: number; limit: number; total: number }
  | { kind: 'deleted'; legacy: unknown };

export interface VersionedRoute<Params extends ZodType, Query extends ZodType, Body extends ZodType> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path after /api (and after /api/v1 for the v1 twin). */
  path: string;
  tags: string[];
  summary: string;
  params?: Params;
  query?: Query;
  body?: Body;
  onRequest: ((request: FastifyRequest) => Promise<void>)[];
  handler: (request: FastifyRequest<{ Params: z.infer<Params>; Querystring: z.infer<Query>; Body: z.infer<Body> }>) => Promise<HandlerResult>;
}

function legacyShape(result: HandlerResult) {
  switch (result.kind) {
    case 'item':
      return ok(result.data);
    case 'all':
      return ok(result.items);
    case 'page':
      return okList(result.items, pagination(result.page, result.limit, result.total));
    case 'deleted':
      return ok(result.legacy);
  }
}

function v1Shape(result: HandlerResult) {
  switch (result.kind) {
    case 'item':
      return ok(result.data);
    case 'all':
      return v1List(result.items, 1, result.items.length, result.items.length);
    case 'page':
      return v1List(result.items, result.page, result.limit, result.total);
    case 'deleted':
      return ok(null);
  }
}

/** v1 lists take ?pageSize= where the legacy route takes ?limit=. */
function v1Query(request: FastifyRequest): void {
  const query = request.query as Record<string, unknown> | undefined;
  if (query && query.pageSize !== undefined && query.limit === undefined) {
    query.limit = query.pageSize;
    delete query.pageSize;
  }
}

/**
 * Registers a legacy route under /api and its /api/v1 twin: the same hooks and handler, only the
 * envelope differs (spec, Versioning).
 */
export function registerVersioned<P extends ZodType, Q extends ZodType, B extends ZodType>(
  app: HttpServer,
  route: VersionedRoute<P, Q, B>,
): void {
  for (const layer of ['legacy', 'v1'] as const) {
    const url = layer === 'legacy' ? `/api${route.path}` : `/api/v1${route.path}`;
    app.route({
      method: route.method,
      url,
      schema: {
        tags: route.tags,
        summary: layer === 'legacy' ? route.summary : `${route.summary} (v1 envelope)`,
        security: [{ bearer: [] }],
        ...(route.params ? { params: route.params } : {}),
        ...(route.query ? { querystring: route.query } : {}),
        ...(route.body ? { body: route.body } : {}),
      },
      config: layer === 'v1' ? { errorEnvelope: 'v1' } : {},
      onRequest: route.onRequest,
      ...(layer === 'v1' ? { preValidation: async (request: FastifyRequest) => v1Query(request) } : {}),
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const result = await route.handler(request as never);
        if (result.kind === 'item' && result.status) void reply.status(result.status);
        return layer === 'legacy' ? legacyShape(result) : v1Shape(result);
      },
    });
  }
}
