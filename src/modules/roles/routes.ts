import { z } from 'zod';
import { notFound } from '../../platform/errors.ts';
import { requirePermission } from '../../platform/http/authentication.ts';
import { commandContextOf, type ReadYourWrites } from '../../platform/http/request-context.ts';
import { idParams } from '../../platform/http/schemas.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import { registerVersioned } from '../../platform/http/versioned.ts';
import type { roleCommands } from './commands.ts';
import { permissionSchema } from './permissions.ts';
import type { RoleQueries } from './queries.ts';

const fields = {
  name: z.string().trim().min(1).max(64),
  description: z.string().max(500),
  color: z.string().regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'a hex colour such as #1a2b3c'),
  permissions: z.array(permissionSchema).max(50),
};
const createBody = z.strictObject({
  name: fields.name,
  description: fields.description.optional(),
  color: fields.color.optional(),
  permissions: fields.permissions.optional(),
});
const updateBody = createBody.partial();

export interface RoleRouteDeps {
  commands: ReturnType<typeof roleCommands>;
  queries: RoleQueries;
  readYourWrites: ReadYourWrites;
  /** Waits for the reactions to a write (the role's removal from its holders) to be readable. */
  awaitReactions: ReadYourWrites;
}

/** /api/roles and /api/v1/roles (admin:all, decisions.md). Roles have no native paging. */
export function registerRoleRoutes(app: HttpServer, deps: RoleRouteDeps): void {
  const guard = { tags: ['Roles'], onRequest: [requirePermission('admin:all')] };
  const roleOr404 = async (tenant: string, id: string) => (await deps.queries.get(tenant, id)) ?? Promise.reject(notFound('Role'));
  const unique = (permissions: string[] | undefined) => (permissions ? [...new Set(permissions)] : undefined);

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/roles',
    summary: 'List roles',
    handler: async (request) => ({ kind: 'all', items: await deps.queries.list(tenantOf(request).name) }),
  });

  registerVersioned(app, {
    ...guard,
    method: 'POST',
    path: '/roles',
    summary: 'Create a role',
    body: createBody,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      const { name, description = '', color = '#9e9e9e', permissions } = request.body;
      const { roleId, position } = await deps.commands.create(tenant, { name, description, color, permissions: unique(permissions) ?? [] }, commandContextOf(request));
      await deps.readYourWrites(position, ['roles']);
      return { kind: 'item', status: 201, data: await roleOr404(tenant, roleId) };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/roles/:id',
    summary: 'Read a role',
    params: idParams,
    handler: async (request) => ({ kind: 'item', data: await roleOr404(tenantOf(request).name, request.params.id) }),
  });

  registerVersioned(app, {
    ...guard,
    method: 'PUT',
    path: '/roles/:id',
    summary: 'Update a role',
    params: idParams,
    body: updateBody,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      await roleOr404(tenant, request.params.id);
      const { permissions, ...rest } = request.body;
      const { position } = await deps.commands.update(tenant, request.params.id, { ...rest, permissions: unique(permissions) }, commandContextOf(request));
      await deps.readYourWrites(position, ['roles']);
      return { kind: 'item', data: await roleOr404(tenant, request.params.id) };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'DELETE',
    path: '/roles/:id',
    summary: 'Delete a role; users holding it lose it',
    params: idParams,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      await roleOr404(tenant, request.params.id);
      const { position } = await deps.commands.delete(tenant, request.params.id, commandContextOf(request));
      await deps.readYourWrites(position, ['roles']);
      await deps.awaitReactions(position, ['users']);
      return { kind: 'deleted', legacy: { deleted: true } };
    },
  });
}
