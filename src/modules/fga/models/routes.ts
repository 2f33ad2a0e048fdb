import { z } from 'zod';
import { notFound } from '../../../platform/errors.ts';
import { ok } from '../../../platform/http/envelopes.ts';
import { commandContextOf } from '../../../platform/http/request-context.ts';
import { idParams, pageQuery } from '../../../platform/http/schemas.ts';
import type { HttpServer } from '../../../platform/http/server.ts';
import { tenantOf } from '../../../platform/http/tenant-resolution.ts';
import { fgaRoute } from '../http-schemas.ts';
import type { ModelCommands } from './commands.ts';
import type { ModelQueries } from './queries.ts';

/** Large enough for thousands of definitions; the body limit (HTTP_BODY_LIMIT) applies as well. */
const MAX_DSL_LENGTH = 500_000;

const fields = {
  name: z.string().trim().min(1).max(100),
  dsl: z.string().min(1).max(MAX_DSL_LENGTH).describe('OpenFGA schema 1.1 DSL (type, relations, define ...)'),
};
const createBody = z.strictObject(fields);
const updateBody = z
  .strictObject({ name: fields.name.optional(), dsl: fields.dsl.optional() })
  .refine((body) => body.name !== undefined || body.dsl !== undefined, 'name or dsl is required');

export interface ModelRouteDeps {
  commands: ModelCommands;
  queries: ModelQueries;
  /** Waits (bounded) until the read model and this instance's model cache reflect a write. */
  settle: (position: bigint) => Promise<void>;
}

/** The spec's Authorization models section. */
export function registerModelRoutes(app: HttpServer, deps: ModelRouteDeps): void {
  const modelOr404 = async (tenant: string, id: string) => (await deps.queries.get(tenant, id)) ?? Promise.reject(notFound('Model'));

  app.get(
    '/api/fga/models',
    fgaRoute('view:fga_models', 'List models, newest version first', { querystring: z.object(pageQuery(100, 20)) }),
    async (request) => ok(await deps.queries.list(tenantOf(request).name, request.query)),
  );

  app.post(
    '/api/fga/models',
    fgaRoute('manage:fga_models', 'Create a model (inactive) from DSL; the next version of the tenant is assigned', { body: createBody }),
    async (request, reply) => {
      const tenant = tenantOf(request).name;
      const { modelId, position } = await deps.commands.create(tenant, request.body, commandContextOf(request));
      await deps.settle(position);
      return reply.status(201).send(ok(await modelOr404(tenant, modelId)));
    },
  );

  app.get(
    '/api/fga/models/:id',
    fgaRoute('view:fga_models', 'Read a model with its DSL and parsed schema', { params: idParams }),
    async (request) => ok(await modelOr404(tenantOf(request).name, request.params.id)),
  );

  app.put(
    '/api/fga/models/:id',
    fgaRoute('manage:fga_models', 'Rename a model or replace its DSL (re-validated; the version stays)', { params: idParams, body: updateBody }),
    async (request) => {
      const tenant = tenantOf(request).name;
      await modelOr404(tenant, request.params.id);
      const { position } = await deps.commands.update(tenant, request.params.id, request.body, commandContextOf(request));
      await deps.settle(position);
      return ok(await modelOr404(tenant, request.params.id));
    },
  );

  app.delete(
    '/api/fga/models/:id',
    fgaRoute('manage:fga_models', 'Delete an inactive model (its tuples stay and are ignored)', { params: idParams }),
    async (request) => {
      const { position } = await deps.commands.delete(tenantOf(request).name, request.params.id, commandContextOf(request));
      await deps.settle(position);
      return ok({ deleted: true });
    },
  );

  app.post(
    '/api/fga/models/:id/activate',
    fgaRoute('manage:fga_models', 'Make the model the tenant\'s active one (the previous one becomes inactive)', { params: idParams }),
    async (request) => {
      const { position } = await deps.commands.activate(tenantOf(request).name, request.params.id, commandContextOf(request));
      await deps.settle(position);
      return ok({ activated: true, modelId: request.params.id });
    },
  );
}
