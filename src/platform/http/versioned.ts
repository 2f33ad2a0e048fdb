import type { FastifyRequest } from 'fastify';
import { z, type ZodType } from 'zod';
import { ok, okBody, okList, okListBody, pagination, v1List, v1ListBody } from './envelopes.ts';
import { route, type RouteDeclaration } from './route.ts';
import type { HttpServer } from './server.ts';

/** What a handler produced, before the legacy or v1 layer gives it its envelope. */
export type HandlerResult =
  | { kind: 'item'; data: unknown }
  | { kind: 'all'; items: unknown[] } // no native paging (tenants, roles, groups)
  | { kind: 'page'; items: unknown[]; page: number; limit: number; total: number }
  | { kind: 'deleted' };

/**
 * What the route answers, declared: `item` the object (status 200, or 201 for a create), `all`
 * or `page` lists of `item`, `deleted` nothing (legacy `{deleted: true}`, v1 `null`).
 */
export type VersionedAnswer = { kind: 'item'; item: ZodType; status?: 201 } | { kind: 'all' | 'page'; item: ZodType } | { kind: 'deleted' };

export interface VersionedRoute<P, Q, B> extends Omit<RouteDeclaration<P, Q, B, never>, 'url' | 'responses' | 'handler' | 'envelope' | 'preValidation'> {
  /** Path after /api (and after /api/v1 for the v1 twin). */
  path: string;
  answers: VersionedAnswer;
  handler: (request: FastifyRequest<{ Params: z.infer<P & ZodType>; Querystring: z.infer<Q & ZodType>; Body: z.infer<B & ZodType> }>) => Promise<HandlerResult>;
}

const deletedLegacy = z.object({ deleted: z.literal(true) });

function legacyShape(result: HandlerResult) {
  switch (result.kind) {
    case 'item':
      return ok(result.data);
    case 'all':
      return ok(result.items);
    case 'page':
      return okList(result.items, pagination(result.page, result.limit, result.total));
    case 'deleted':
      return ok({ deleted: true });
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

function legacyResponses(answer: VersionedAnswer): Record<number, ZodType> {
  switch (answer.kind) {
    case 'item':
      return { [answer.status ?? 200]: okBody(answer.item) };
    case 'all':
      return { 200: okBody(z.array(answer.item)) };
    case 'page':
      return { 200: okListBody(answer.item) };
    case 'deleted':
      return { 200: okBody(deletedLegacy) };
  }
}

function v1Responses(answer: VersionedAnswer): Record<number, ZodType> {
  switch (answer.kind) {
    case 'item':
      return { [answer.status ?? 200]: okBody(answer.item) };
    case 'all':
    case 'page':
      return { 200: v1ListBody(answer.item) };
    case 'deleted':
      return { 200: okBody(z.null()) };
  }
}

/** v1 lists take ?pageSize= where the legacy route takes ?limit=. */
async function v1Query(request: FastifyRequest): Promise<void> {
  const query = request.query as Record<string, unknown> | undefined;
  if (query && query.pageSize !== undefined && query.limit === undefined) {
    query.limit = query.pageSize;
    delete query.pageSize;
  }
}

/**
 * A legacy route under /api and its /api/v1 twin, both declared by one `route`: the same access,
 * schemas and handler, only the envelope differs (spec, Versioning).
 */
export function registerVersioned<P extends ZodType | undefined, Q extends ZodType | undefined, B extends ZodType | undefined>(
  app: HttpServer,
  declaration: VersionedRoute<P, Q, B>,
): void {
  const { path, answers, handler, ...common } = declaration;
  route(app, {
    ...common,
    url: `/api${path}`,
    responses: legacyResponses(answers),
    handler: async (request) => legacyShape(await handler(request as never)) as never,
  });
  route(app, {
    ...common,
    url: `/api/v1${path}`,
    summary: `${declaration.summary} (v1 envelope)`,
    responses: v1Responses(answers),
    preValidation: v1Query,
    handler: async (request) => v1Shape(await handler(request as never)) as never,
  });
}
