import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { beyondHeld } from '../roles/index.ts';
import { notFound, platformError } from '../../platform/errors.ts';
import { principalOf } from '../../platform/http/authentication.ts';
import { ok, okBody } from '../../platform/http/envelopes.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import { permission, route } from '../../platform/http/route.ts';
import { idParams, pageQuery } from '../../platform/http/schemas.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import { registerVersioned } from '../../platform/http/versioned.ts';
import type { ApplicationCommands } from './commands.ts';
import { APPLICATION_TYPES } from './events.ts';
import type { ApplicationQueries, ApplicationView } from './queries.ts';
import { GRANTS_BY_TYPE } from './rules.ts';

const uris = z.array(z.string().trim().min(1).max(2048)).max(50);
const settingsFields = {
  name: z.string().trim().min(1).max(100),
  redirectUris: uris,
  postLogoutRedirectUris: uris,
  allowedOrigins: uris,
  grantTypes: z.array(z.string().min(1).max(100)).max(10).transform((grants) => [...new Set(grants)]),
  scopes: z.array(z.string().min(1).max(100)).max(50).transform((scopes) => [...new Set(scopes)]),
};
const createBody = z.strictObject({
  ...settingsFields,
  type: z.enum(APPLICATION_TYPES),
  redirectUris: settingsFields.redirectUris.default([]),
  postLogoutRedirectUris: settingsFields.postLogoutRedirectUris.default([]),
  allowedOrigins: settingsFields.allowedOrigins.default([]),
  grantTypes: settingsFields.grantTypes
    .optional()
    .describe(
      'grant_type values as sent to the token endpoint: authorization_code, refresh_token, client_credentials, ' +
        'urn:ietf:params:oauth:grant-type:device_code, urn:ietf:params:oauth:grant-type:token-exchange. Allowed per type: web all but ' +
        'client_credentials; spa authorization_code, refresh_token; native those and device_code; m2m client_credentials, token-exchange. ' +
        'Default per type: web/spa authorization_code, refresh_token; native also device_code; m2m client_credentials',
    ),
  scopes: settingsFields.scopes.default([]).describe('m2m only: permission names (manage:users ...) and scim; a client_credentials token asks a subset'),
});
const updateBody = z.strictObject(settingsFields).partial();

const applicationSchema = z.object({
  id: z.string(),
  clientId: z.string(),
  name: z.string(),
  type: z.enum(APPLICATION_TYPES),
  redirectUris: z.array(z.string()),
  postLogoutRedirectUris: z.array(z.string()),
  allowedOrigins: z.array(z.string()),
  grantTypes: z.array(z.string()),
  scopes: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const createdSchema = applicationSchema.extend({
  clientSecret: z.string().nullable().describe('web and m2m: the secret, shown only this once; null for public clients (spa, native)'),
});

/** The permissions an application's scopes give its tokens: `scim` stands for manage:users (SCIM provisions users). */
const permissionsOfScopes = (scopes: readonly string[]) => scopes.map((scope) => (scope === 'scim' ? 'manage:users' : scope));

/**
 * A caller hands an application (its scopes, or its secret) only permissions it holds itself
 * (admin:all holds each): manage:applications alone cannot mint an admin:all client.
 */
function assertWithinCaller(request: FastifyRequest, scopes: readonly string[]): void {
  const beyond = beyondHeld(principalOf(request).permissions, permissionsOfScopes(scopes));
  if (beyond) throw platformError('PERMISSION_DENIED', `The application's scopes give ${beyond}, which you do not hold`);
}

/** /api/applications (manage:applications; decisions.md, OAuth 2.0 and OpenID Connect). */
export function registerApplicationRoutes(app: HttpServer, deps: { commands: ApplicationCommands; queries: ApplicationQueries }): void {
  const guard = { tags: ['Applications'], access: permission('manage:applications') };
  const existing = async (tenant: string, id: string): Promise<ApplicationView> => (await deps.queries.get(tenant, id)) ?? Promise.reject(notFound('Application'));

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/applications',
    summary: 'List applications (OAuth clients); secrets are never shown',
    answers: { kind: 'page', item: applicationSchema },
    query: z.object(pageQuery()),
    handler: async (request) => {
      const { page, limit } = request.query;
      const { items, total } = await deps.queries.list(tenantOf(request).name, page, limit);
      return { kind: 'page', items, page, limit, total };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'POST',
    path: '/applications',
    summary: 'Create an application; web and m2m get a client secret, shown only in this answer',
    answers: { kind: 'item', item: createdSchema, status: 201 },
    body: createBody,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      const { type, grantTypes, ...settings } = request.body;
      assertWithinCaller(request, settings.scopes);
      const created = await deps.commands.create(tenant, type, { ...settings, grantTypes: grantTypes ?? GRANTS_BY_TYPE[type].defaults }, commandContextOf(request));
      return { kind: 'item', status: 201, data: { ...(await existing(tenant, created.applicationId)), clientSecret: created.clientSecret } };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/applications/:id',
    summary: 'Read an application',
    answers: { kind: 'item', item: applicationSchema },
    errors: ['NOT_FOUND'],
    params: idParams,
    handler: async (request) => ({ kind: 'item', data: await existing(tenantOf(request).name, request.params.id) }),
  });

  registerVersioned(app, {
    ...guard,
    method: 'PUT',
    path: '/applications/:id',
    summary: 'Update an application (its type is fixed)',
    answers: { kind: 'item', item: applicationSchema },
    errors: ['NOT_FOUND'],
    params: idParams,
    body: updateBody,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      await existing(tenant, request.params.id);
      if (request.body.scopes) assertWithinCaller(request, request.body.scopes);
      await deps.commands.update(tenant, request.params.id, request.body, commandContextOf(request));
      return { kind: 'item', data: await existing(tenant, request.params.id) };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'DELETE',
    path: '/applications/:id',
    summary: 'Delete an application: its client_id stops authenticating at once',
    answers: { kind: 'deleted' },
    errors: ['NOT_FOUND'],
    params: idParams,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      await existing(tenant, request.params.id);
      await deps.commands.delete(tenant, request.params.id, commandContextOf(request));
      return { kind: 'deleted' };
    },
  });

  // Legacy only (spec, Versioning: client-secret rotation has no /api/v1 twin).
  route(app, {
    ...guard,
    method: 'POST',
    url: '/api/applications/:id/rotate-secret',
    summary: 'Replace the client secret (web, m2m); the new one is shown only in this answer and the old one stops working at once',
    params: idParams,
    responses: { 200: okBody(z.object({ clientSecret: z.string() })) },
    errors: ['NOT_FOUND', 'APPLICATION_IS_PUBLIC'],
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      // The new secret is the application's permissions: only for a caller who holds them.
      assertWithinCaller(request, (await existing(tenant, request.params.id)).scopes);
      return ok(await deps.commands.rotateSecret(tenant, request.params.id, commandContextOf(request)));
    },
  });
}
