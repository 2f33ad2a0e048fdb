import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ok, okBody, okListBody, okList, pagination } from '../../../platform/http/envelopes.ts';
import { commandContextOf } from '../../../platform/http/request-context.ts';
import { route } from '../../../platform/http/route.ts';
import { pageQuery } from '../../../platform/http/schemas.ts';
import type { HttpServer } from '../../../platform/http/server.ts';
import { tenantOf } from '../../../platform/http/tenant-resolution.ts';
import { consistencyTokenOut, fgaGuard, storedTupleSchema, tokenOf, tupleSchema, writtenTupleSchema } from '../http-schemas.ts';
import type { TupleChanges, TupleCommands } from './commands.ts';
import type { TupleQueries } from './queries.ts';

/** The spec's bulk limit: 100 writes and 100 deletes. */
const MAX_BULK = 100;

const listQuery = z.object({ ...pageQuery(100), ...tupleSchema.omit({ subjectRelation: true }).partial().shape });
const bulkBody = z
  .strictObject({ writes: z.array(tupleSchema).max(MAX_BULK).optional(), deletes: z.array(tupleSchema).max(MAX_BULK).optional() })
  .refine((body) => (body.writes?.length ?? 0) + (body.deletes?.length ?? 0) > 0, 'writes or deletes must hold at least one tuple');

const TOKEN_NOTE = ' The answer carries consistencyToken: pass it to check, expand or list-objects to see this write.';
const WRITE_ERRORS = ['NO_ACTIVE_MODEL', 'INVALID_TYPE', 'INVALID_RELATION', 'INVALID_SUBJECT_TYPE', 'TUPLE_EXISTS'];

export interface TupleRouteDeps {
  commands: TupleCommands;
  queries: TupleQueries;
  /** Waits (bounded) until this instance's index reflects a write. */
  settle: (position: bigint) => Promise<void>;
}

/** The spec's Tuples section. */
export function registerTupleRoutes(app: HttpServer, deps: TupleRouteDeps): void {
  const apply = async (request: FastifyRequest, changes: Partial<TupleChanges>) => {
    const result = await deps.commands.apply(tenantOf(request).name, { writes: changes.writes ?? [], deletes: changes.deletes ?? [] }, commandContextOf(request));
    await deps.settle(result.position);
    return result;
  };
  const manage = fgaGuard('manage:fga_tuples');

  route(app, {
    ...fgaGuard('view:fga_tuples'),
    method: 'GET',
    url: '/api/fga/tuples',
    summary: 'List tuples, filtered by any of objectType, objectId, relation, subjectType, subjectId',
    query: listQuery,
    responses: { 200: okListBody(storedTupleSchema) },
    handler: async (request) => {
      const { page, limit, ...filter } = request.query;
      const { items, total } = await deps.queries.list(tenantOf(request).name, filter, { page, limit });
      return okList(items, pagination(page, limit, total));
    },
  });

  route(app, {
    ...manage,
    method: 'POST',
    url: '/api/fga/tuples',
    summary: `Write a tuple, validated against the active model.${TOKEN_NOTE}`,
    body: tupleSchema,
    responses: { 201: okBody(writtenTupleSchema) },
    errors: WRITE_ERRORS,
    handler: async (request) => {
      const { position } = await apply(request, { writes: [request.body] });
      return ok({ ...request.body, consistencyToken: tokenOf(position) });
    },
  });

  route(app, {
    ...manage,
    method: 'DELETE',
    url: '/api/fga/tuples',
    summary: `Delete a tuple (body: the tuple); succeeds when it does not exist.${TOKEN_NOTE}`,
    body: tupleSchema,
    responses: { 200: okBody(z.object({ deleted: z.literal(true), consistencyToken: consistencyTokenOut })) },
    handler: async (request) => {
      const { position } = await apply(request, { deletes: [request.body] });
      return ok({ deleted: true as const, consistencyToken: tokenOf(position) });
    },
  });

  route(app, {
    ...manage,
    method: 'POST',
    url: '/api/fga/tuples/bulk',
    summary: `Write and delete up to ${MAX_BULK} tuples each, all validated first, applied atomically; counts are the changes made.${TOKEN_NOTE}`,
    body: bulkBody,
    responses: { 200: okBody(z.object({ written: z.number().int(), deleted: z.number().int(), consistencyToken: consistencyTokenOut })) },
    errors: WRITE_ERRORS,
    handler: async (request) => {
      const { written, deleted, position } = await apply(request, request.body);
      return ok({ written, deleted, consistencyToken: tokenOf(position) });
    },
  });
}
