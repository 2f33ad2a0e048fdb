import { z, type ZodType } from 'zod';
import { ok } from '../../../platform/http/envelopes.ts';
import type { HttpServer } from '../../../platform/http/server.ts';
import { tenantOf } from '../../../platform/http/tenant-resolution.ts';
import { consistencyToken, fgaRoute, queryFields, queryObjectId } from '../http-schemas.ts';
import type { AuthorizationQueries } from './authorization.ts';

const checkBody = z.strictObject({
  ...queryFields,
  objectId: queryObjectId,
  explain: z.boolean().default(false).describe('also return the resolution tree'),
});
const expandBody = z.strictObject({ objectType: queryFields.objectType, objectId: queryObjectId, relation: queryFields.relation, consistencyToken });
const listObjectsBody = z.strictObject(queryFields);

type Answer<Body> = (tenant: string, request: Omit<Body, 'consistencyToken'>, atLeast: bigint | undefined) => Promise<unknown>;

/** The spec's Authorization queries (all debug:fga), answered from the in-memory index. */
export function registerAuthorizationRoutes(app: HttpServer, queries: AuthorizationQueries): void {
  function query<Body extends { consistencyToken?: bigint | undefined }>(path: string, summary: string, body: ZodType<Body>, answer: Answer<Body>) {
    app.post(path, fgaRoute('debug:fga', summary, { body }), async (request) => {
      const { consistencyToken: atLeast, ...rest } = request.body as Body;
      return ok(await answer(tenantOf(request).name, rest, atLeast));
    });
  }

  query('/api/fga/check', 'Does the subject have the relation with the object? With explain, how it was resolved', checkBody, queries.check);
  query('/api/fga/expand', 'The users of object#relation, one rewrite level deep (usersets are expanded by further calls)', expandBody, queries.expand);
  query('/api/fga/list-objects', 'Ids (without the type) of every object of objectType the subject has the relation with', listObjectsBody, queries.listObjects);
}
