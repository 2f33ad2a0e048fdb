import { z } from 'zod';
import { changedAt } from '../../../platform/commands/handle-command.ts';
import { notFound } from '../../../platform/errors.ts';
import { ok, okBody } from '../../../platform/http/envelopes.ts';
import { commandContextOf } from '../../../platform/http/request-context.ts';
import { route } from '../../../platform/http/route.ts';
import { idParams, pageQuery } from '../../../platform/http/schemas.ts';
import type { HttpServer } from '../../../platform/http/server.ts';
import { tenantOf } from '../../../platform/http/tenant-resolution.ts';
import { fgaGuard, modelSchema, modelSummarySchema } from '../http-schemas.ts';
import type { ModelCommands } from './commands.ts';
import { createdModelView, type ModelQueries } from './queries.ts';

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
const DSL_ERRORS = ['DSL_PARSE_ERROR', 'DSL_VALIDATION_ERROR'];

export interface ModelRouteDeps {
  commands: ModelCommands;
  queries: ModelQueries;
  /** Waits (bounded) until this instance's model cache and index reflect a write. */
  settle: (position: bigint) => Promise<void>;
}

/** The spec's Authorization models section. */
export function registerModelRoutes(app: HttpServer, deps: ModelRouteDeps): void {
  const modelOr404 = async (tenant: string, id: string) => (await deps.queries.get(tenant, id)) ?? Promise.reject(notFound('Model'));
  const view = fgaGuard('view:fga_models');
  const manage = fgaGuard('manage:fga_models');

  route(app, {
    ...view,
    method: 'GET',
    url: '/api/fga/models',
    summary: 'List models, newest version first',
    query: z.object(pageQuery(100, 20)),
    responses: { 200: okBody(z.array(modelSummarySchema)) },
    handler: async (request) => ok(await deps.queries.list(tenantOf(request).name, request.query)),
  });

  route(app, {
    ...manage,
    method: 'POST',
    url: '/api/fga/models',
    summary: 'Create a model (inactive) from DSL; the next version of the tenant is assigned',
    body: createBody,
    responses: { 201: okBody(modelSchema) },
    errors: DSL_ERRORS,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      const { model, createdAt, position } = await deps.commands.create(tenant, request.body, commandContextOf(request));
      await deps.settle(position);
      // From the command's resulting state: a lagging read model cannot make a create a 404.
      return ok(createdModelView(model, createdAt));
    },
  });

  route(app, {
    ...view,
    method: 'GET',
    url: '/api/fga/models/:id',
    summary: 'Read a model with its DSL and parsed schema',
    params: idParams,
    responses: { 200: okBody(modelSchema) },
    errors: ['NOT_FOUND'],
    handler: async (request) => ok(await modelOr404(tenantOf(request).name, request.params.id)),
  });

  route(app, {
    ...manage,
    method: 'PUT',
    url: '/api/fga/models/:id',
    summary: 'Rename a model or replace its DSL (re-validated; the version stays)',
    params: idParams,
    body: updateBody,
    responses: { 200: okBody(modelSchema) },
    errors: ['NOT_FOUND', ...DSL_ERRORS],
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      const before = await modelOr404(tenant, request.params.id);
      const result = await deps.commands.update(tenant, request.params.id, request.body, commandContextOf(request));
      await deps.settle(result.position);
      const model = result.state.models.get(request.params.id);
      if (!model) throw notFound('Model');
      // From the command's resulting state: never stale, whatever the projection's lag.
      return ok({ ...before, name: model.name, dsl: model.dsl, schema: model.schema, isActive: model.status === 'active', updatedAt: changedAt(result, before.updatedAt) });
    },
  });

  route(app, {
    ...manage,
    method: 'DELETE',
    url: '/api/fga/models/:id',
    summary: 'Delete an inactive model (its tuples stay and are ignored)',
    params: idParams,
    responses: { 200: okBody(z.object({ deleted: z.literal(true) })) },
    errors: ['NOT_FOUND', 'MODEL_IS_ACTIVE'],
    handler: async (request) => {
      const { position } = await deps.commands.delete(tenantOf(request).name, request.params.id, commandContextOf(request));
      await deps.settle(position);
      return ok({ deleted: true } as const);
    },
  });

  route(app, {
    ...manage,
    method: 'POST',
    url: '/api/fga/models/:id/activate',
    summary: "Make the model the tenant's active one (the previous one becomes inactive)",
    params: idParams,
    responses: { 200: okBody(z.object({ activated: z.literal(true), modelId: z.string() })) },
    errors: ['NOT_FOUND', 'ALREADY_ACTIVE'],
    handler: async (request) => {
      const { position } = await deps.commands.activate(tenantOf(request).name, request.params.id, commandContextOf(request));
      await deps.settle(position);
      return ok({ activated: true as const, modelId: request.params.id });
    },
  });
}
