import { z } from 'zod';
import { notFound } from '../../platform/errors.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import { permission } from '../../platform/http/route.ts';
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
const roleSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  color: z.string(),
  permissions: z.array(z.string()),
  createdAt: z.string().describe('ISO 8601'),
});

export interface RoleRouteDeps {
  commands: ReturnType<typeof roleCommands>;
  queries: RoleQueries;
  /** Waits for the reactions to a write (the role's removal from its holders) to be readable. */
  awaitReactions: (position: bigint) => Promise<void>;
}

/** /api/roles and /api/v1/roles (admin:all, decisions.md). Roles have no native paging. */
export function registerRoleRoutes(app: HttpServer, deps: RoleRouteDeps): void {
  const guard = { tags: ['Roles'], access: permission('admin:all') };
  const roleOr404 = async (tenant: string, id: string) => (await deps.queries.get(tenant, id)) ?? Promise.reject(notFound('Role'));
  const unique = (permissions: string[] | undefined) => (permissions ? [...new Set(permissions)] : undefined);

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/roles',
    summary: 'List roles',
    answers: { kind: 'all', item: roleSchema },
    handler: async (request) => ({ kind: 'all', items: await deps.queries.list(tenantOf(request).name) }),
  });

  registerVersioned(app, {
    ...guard,
    method: 'POST',
    path: '/roles',
    summary: 'Create a role',
    body: createBody,
    answers: { kind: 'item', item: roleSchema, status: 201 },
    errors: ['ROLE_NAME_TAKEN'],
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      const { name, description = '', color = '#9e9e9e', permissions } = request.body;
      const { role } = await deps.commands.create(tenant, { name, description, color, permissions: unique(permissions) ?? [] }, commandContextOf(request));
      // From what the command appended: a lagging read model cannot make a create a 404.
      return { kind: 'item', data: { ...role, createdAt: new Date(role.createdAt).toISOString() } };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/roles/:id',
    summary: 'Read a role',
    params: idParams,
    answers: { kind: 'item', item: roleSchema },
    errors: ['NOT_FOUND'],
    handler: async (request) => ({ kind: 'item', data: await roleOr404(tenantOf(request).name, request.params.id) }),
  });

  registerVersioned(app, {
    ...guard,
    method: 'PUT',
    path: '/roles/:id',
    summary: 'Update a role',
    params: idParams,
    body: updateBody,
    answers: { kind: 'item', item: roleSchema },
    errors: ['NOT_FOUND', 'ROLE_NAME_TAKEN'],
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      const before = await roleOr404(tenant, request.params.id);
      const { permissions, ...rest } = request.body;
      const { state } = await deps.commands.update(tenant, request.params.id, { ...rest, permissions: unique(permissions) }, commandContextOf(request));
      if (state.status !== 'active') throw notFound('Role');
      // From the command's resulting state: never stale, whatever the projection's lag.
      const { roleId: id, name, description, color, permissions: held } = state;
      return { kind: 'item', data: { id, name, description, color, permissions: held, createdAt: before.createdAt } };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'DELETE',
    path: '/roles/:id',
    summary: 'Delete a role; users holding it lose it',
    params: idParams,
    answers: { kind: 'deleted' },
    errors: ['NOT_FOUND'],
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      await roleOr404(tenant, request.params.id);
      const { position } = await deps.commands.delete(tenant, request.params.id, commandContextOf(request));
      await deps.awaitReactions(position);
      return { kind: 'deleted' };
    },
  });
}
