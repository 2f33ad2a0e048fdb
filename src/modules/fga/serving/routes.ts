import { z, type ZodType } from 'zod';
import { ok, okBody } from '../../../platform/http/envelopes.ts';
import { route } from '../../../platform/http/route.ts';
import type { HttpServer } from '../../../platform/http/server.ts';
import { tenantOf } from '../../../platform/http/tenant-resolution.ts';
import { checkResultSchema, consistencyToken, expandTreeSchema, fgaGuard, listObjectsSchema, queryFields, queryObjectId } from '../http-schemas.ts';
import type { AuthorizationQueries } from './authorization.ts';

const checkBody = z.strictObject({
  ...queryFields,
  objectId: queryObjectId,
  explain: z.boolean().default(false).describe('also return the resolution tree'),
});
const expandBody = z.strictObject({ objectType: queryFields.objectType, objectId: queryObjectId, relation: queryFields.relation, consistencyToken });
const listObjectsBody = z.strictObject(queryFields);

type Answer<Body, Result> = (tenant: string, request: Omit<Body, 'consistencyToken'>, atLeast: bigint | undefined) => Promise<Result>;

const QUERY_ERRORS = ['NO_ACTIVE_MODEL', 'INVALID_TYPE', 'INVALID_RELATION', 'MAX_DEPTH_EXCEEDED', 'CONSISTENCY_TIMEOUT'];

/** The spec's Authorization queries (all debug:fga), answered from the in-memory index. */
export function registerAuthorizationRoutes(app: HttpServer, queries: AuthorizationQueries): void {
  function query<Body extends { consistencyToken?: bigint | undefined }, Result>(
    url: string,
    summary: string,
    body: ZodType<Body>,
    result: ZodType<Result>,
    answer: Answer<Body, Result>,
  ) {
    route(app, {
      ...fgaGuard('debug:fga'),
      method: 'POST',
      url,
      summary,
      body,
      responses: { 200: okBody(result) },
      errors: QUERY_ERRORS,
      handler: async (request) => {
        const { consistencyToken: atLeast, ...rest } = request.body as Body;
        return ok(await answer(tenantOf(request).name, rest, atLeast)) as never;
      },
    });
  }

  query('/api/fga/check', 'Does the subject have the relation with the object? With explain, how it was resolved', checkBody, checkResultSchema, queries.check);
  query('/api/fga/expand', 'The users of object#relation, one rewrite level deep (usersets are expanded by further calls)', expandBody, expandTreeSchema, queries.expand);
  query('/api/fga/list-objects', 'Ids (without the type) of every object of objectType the subject has the relation with', listObjectsBody, listObjectsSchema, queries.listObjects);
}
