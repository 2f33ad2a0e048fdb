import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { asOfQuery } from '../audit/history-routes.ts';
import { notFound } from '../../platform/errors.ts';
import { requirePermission } from '../../platform/http/authentication.ts';
import { ok } from '../../platform/http/envelopes.ts';
import { commandContextOf, type ReadYourWrites } from '../../platform/http/request-context.ts';
import { idParams, pageQuery } from '../../platform/http/schemas.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import { registerVersioned } from '../../platform/http/versioned.ts';
import type { UserCommands } from './commands.ts';
import { MAX_PASSWORD_LENGTH } from './passwords.ts';
import { emailSchema, nameSchema as name, usernameSchema as username } from './schemas.ts';
import type { UserDetail, UserQueries } from './queries.ts';


const createBody = z.strictObject({
  email: emailSchema,
  username: username.optional(),
  firstName: name.optional(),
  lastName: name.optional(),
  password: z.string().max(MAX_PASSWORD_LENGTH).optional(),
  roles: z.array(z.string().min(1).max(64)).max(50).optional(),
  enabled: z.boolean().optional(),
});
const updateBody = z.strictObject({
  email: emailSchema.optional(),
  username: username.optional(),
  firstName: name.optional(),
  lastName: name.optional(),
  enabled: z.boolean().optional(),
});
const listQuery = z.object({
  ...pageQuery(100),
  search: z.string().trim().max(200).optional(),
  role: z.string().max(64).optional(),
  status: z.enum(['active', 'disabled', 'locked']).optional(),
});
const roleBody = z.strictObject({ roleId: z.string().min(1).max(100) });

export interface UserRouteDeps {
  commands: UserCommands;
  queries: UserQueries;
  readYourWrites: ReadYourWrites;
  /** Waits for the reactions to a write (the deleted user's sessions revoked) to be readable. */
  awaitReactions: ReadYourWrites;
  /** The user at an earlier instant (compliance history, audit module). */
  asOf: (request: FastifyRequest, userId: string, at: Date) => Promise<UserDetail>;
}

/** The spec's Users section (manage:users), with its /api/v1 twin for list/get/create/update/delete. */
export function registerUserRoutes(app: HttpServer, deps: UserRouteDeps): void {
  const guard = { tags: ['Users'], onRequest: [requirePermission('manage:users')] };
  const detailOr404 = async (tenant: string, id: string) => (await deps.queries.get(tenant, id)) ?? Promise.reject(notFound('User'));

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/users',
    summary: 'List users (search over email, username, first and last name; filter by role and status)',
    query: listQuery,
    handler: async (request) => {
      const { items, total } = await deps.queries.list(tenantOf(request).name, request.query);
      return { kind: 'page', items, page: request.query.page, limit: request.query.limit, total };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'POST',
    path: '/users',
    summary: 'Create a user (without roles: the tenant role `user`)',
    body: createBody,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      const { userId, position } = await deps.commands.create(tenant, request.body, commandContextOf(request));
      await deps.readYourWrites(position, ['users']);
      return { kind: 'item', status: 201, data: await detailOr404(tenant, userId) };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/users/:id',
    summary: 'Read a user with two-factor status, phone number and last login; with asOf, as it was then',
    params: idParams,
    query: asOfQuery,
    handler: async (request) => {
      const { asOf } = request.query;
      const data = asOf ? await deps.asOf(request, request.params.id, asOf) : await detailOr404(tenantOf(request).name, request.params.id);
      return { kind: 'item', data };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'PUT',
    path: '/users/:id',
    summary: 'Update a user: only supplied fields change; enabled=false disables',
    params: idParams,
    body: updateBody,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      const { position } = await deps.commands.update(tenant, request.params.id, request.body, commandContextOf(request));
      await deps.readYourWrites(position, ['users']);
      const user = await detailOr404(tenant, request.params.id);
      const updated = Object.fromEntries(Object.keys(request.body).map((key) => [key, user[key as keyof typeof user]]));
      return { kind: 'item', data: { id: user.id, email: user.email, ...updated, enabled: user.enabled } };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'DELETE',
    path: '/users/:id',
    summary: 'Soft-delete a user: credentials removed, sessions invalidated, e-mail reusable',
    params: idParams,
    handler: async (request) => {
      const { position } = await deps.commands.delete(tenantOf(request).name, request.params.id, commandContextOf(request));
      await deps.readYourWrites(position, ['users']);
      // "sessions invalidated": answered once the revocations the deletion caused are readable.
      await deps.awaitReactions(position, ['sessions']);
      return { kind: 'deleted', legacy: { deleted: true } };
    },
  });

  const roleRoute = { schema: { tags: ['Users'], security: [{ bearer: [] }], params: idParams }, onRequest: guard.onRequest };

  app.get('/api/users/:id/roles', { ...roleRoute, schema: { ...roleRoute.schema, summary: "A user's roles" } }, async (request) => {
    const tenant = tenantOf(request).name;
    await detailOr404(tenant, request.params.id);
    return ok(await deps.queries.roles(tenant, request.params.id));
  });

  app.post(
    '/api/users/:id/roles',
    { ...roleRoute, schema: { ...roleRoute.schema, body: roleBody, summary: 'Assign a role (a no-op when already assigned)' } },
    async (request) => {
      const { position } = await deps.commands.assignRole(tenantOf(request).name, request.params.id, request.body.roleId, commandContextOf(request));
      await deps.readYourWrites(position, ['users']);
      return ok({ assigned: true });
    },
  );

  app.delete(
    '/api/users/:id/roles',
    { ...roleRoute, schema: { ...roleRoute.schema, body: roleBody, summary: 'Remove a role (a no-op when absent)' } },
    async (request) => {
      const { position } = await deps.commands.removeRole(tenantOf(request).name, request.params.id, request.body.roleId, commandContextOf(request));
      await deps.readYourWrites(position, ['users']);
      return ok({ removed: true });
    },
  );
}
