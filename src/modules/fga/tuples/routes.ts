import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ok, okList, pagination } from '../../../platform/http/envelopes.ts';
import { commandContextOf } from '../../../platform/http/request-context.ts';
import { pageQuery } from '../../../platform/http/schemas.ts';
import type { HttpServer } from '../../../platform/http/server.ts';
import { tenantOf } from '../../../platform/http/tenant-resolution.ts';
import { fgaRoute, tokenOf, tupleSchema } from '../http-schemas.ts';
import type { TupleChanges, TupleCommands } from './commands.ts';
import type { TupleQueries } from './queries.ts';

/** The spec's bulk limit: 100 writes and 100 deletes. */
const MAX_BULK = 100;

const listQuery = z.object({ ...pageQuery(100), ...tupleSchema.omit({ subjectRelation: true }).partial().shape });
const bulkBody = z
  .strictObject({ writes: z.array(tupleSchema).max(MAX_BULK).optional(), deletes: z.array(tupleSchema).max(MAX_BULK).optional() })
  .refine((body) => (body.writes?.length ?? 0) + (body.deletes?.length ?? 0) > 0, 'writes or deletes must hold at least one tuple');

const TOKEN_NOTE = ' The answer carries consistencyToken: pass it to check, expand or list-objects to see this write.';

export interface TupleRouteDeps {
  commands: TupleCommands;
  queries: TupleQueries;
  /** Waits (bounded) until the read model and this instance's index reflect a write. */
  settle: (position: bigint) => Promise<void>;
}

/** The spec's Tuples section. */
export function registerTupleRoutes(app: HttpServer, deps: TupleRouteDeps): void {
  const apply = async (request: FastifyRequest, changes: Partial<TupleChanges>) => {
    const result = await deps.commands.apply(tenantOf(request).name, { writes: changes.writes ?? [], deletes: changes.deletes ?? [] }, commandContextOf(request));
    await deps.settle(result.position);
    return result;
  };

  app.get(
    '/api/fga/tuples',
    fgaRoute('view:fga_tuples', 'List tuples, filtered by any of objectType, objectId, relation, subjectType, subjectId', { querystring: listQuery }),
    async (request) => {
      const { page, limit, ...filter } = request.query;
      const { items, total } = await deps.queries.list(tenantOf(request).name, filter, { page, limit });
      return okList(items, pagination(page, limit, total));
    },
  );

  app.post(
    '/api/fga/tuples',
    fgaRoute('manage:fga_tuples', `Write a tuple, validated against the active model.${TOKEN_NOTE}`, { body: tupleSchema }),
    async (request, reply) => {
      const { position } = await apply(request, { writes: [request.body] });
      return reply.status(201).send(ok({ ...request.body, consistencyToken: tokenOf(position) }));
    },
  );

  app.delete(
    '/api/fga/tuples',
    fgaRoute('manage:fga_tuples', `Delete a tuple (body: the tuple); succeeds when it does not exist.${TOKEN_NOTE}`, { body: tupleSchema }),
    async (request) => {
      const { position } = await apply(request, { deletes: [request.body] });
      return ok({ deleted: true, consistencyToken: tokenOf(position) });
    },
  );

  app.post(
    '/api/fga/tuples/bulk',
    fgaRoute(
      'manage:fga_tuples',
      `Write and delete up to ${MAX_BULK} tuples each, all validated first, applied atomically; counts are the changes made.${TOKEN_NOTE}`,
      { body: bulkBody },
    ),
    async (request) => {
      const { written, deleted, position } = await apply(request, request.body);
      return ok({ written, deleted, consistencyToken: tokenOf(position) });
    },
  );
}
