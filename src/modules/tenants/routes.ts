import { z } from 'zod';
import type { CommandContext } from '../../platform/commands/context.ts';
import { changedAt } from '../../platform/commands/handle-command.ts';
import { notFound } from '../../platform/errors.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import { platformAdmin } from '../../platform/http/route.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { TENANT_NAME } from '../../platform/http/tenant-resolution.ts';
import { idParams } from '../../platform/http/schemas.ts';
import { registerVersioned } from '../../platform/http/versioned.ts';
import type { TenantCommands } from './commands.ts';
import { createdTenantView, type Tenant, type TenantQueries } from './queries.ts';

const createBody = z
  .strictObject({
    name: z.string().regex(TENANT_NAME, 'lowercase letters, digits and dashes, 2 to 63 characters'),
    displayName: z.string().trim().min(1).max(200).optional(),
    adminEmail: z.email().max(254).optional(),
    adminPassword: z.string().max(256).optional(),
  })
  .refine((body) => (body.adminEmail === undefined) === (body.adminPassword === undefined), {
    message: 'adminEmail and adminPassword go together',
    path: ['adminPassword'],
  });
const updateBody = z.strictObject({ displayName: z.string().trim().min(1).max(200).optional() });

const tenantSchema = z.object({
  id: z.string(),
  name: z.string(),
  displayName: z.string(),
  createdAt: z.string().describe('ISO 8601'),
  updatedAt: z.string().describe('ISO 8601'),
});

const view = ({ id, name, displayName, createdAt, updatedAt }: Tenant) => ({ id, name, displayName, createdAt, updatedAt });

export interface TenantRouteDeps {
  commands: TenantCommands;
  queries: TenantQueries;
  platformTenant: string | undefined;
  /** The first administrator of a new tenant: checked before the tenant exists, created after. */
  firstAdmin: {
    check(tenant: string, password: string): Promise<void>;
    create(tenant: string, email: string, password: string, context: CommandContext): Promise<void>;
  };
}

/** /api/tenants and /api/v1/tenants: admin:all in the platform tenant (decisions.md). */
export function registerTenantRoutes(app: HttpServer, deps: TenantRouteDeps): void {
  const findOr404 = async (id: string) => (await deps.queries.find(id)) ?? Promise.reject(notFound('Tenant'));
  const common = { tags: ['Tenants'], access: platformAdmin(deps.platformTenant) };

  registerVersioned(app, {
    ...common,
    method: 'GET',
    path: '/tenants',
    summary: 'List tenants',
    answers: { kind: 'all', item: tenantSchema },
    handler: async () => ({ kind: 'all', items: (await deps.queries.list()).map(view) }),
  });

  registerVersioned(app, {
    ...common,
    method: 'POST',
    path: '/tenants',
    summary: 'Create a tenant with the default roles',
    body: createBody,
    answers: { kind: 'item', item: tenantSchema, status: 201 },
    errors: ['TENANT_EXISTS', 'EMAIL_TAKEN'],
    handler: async (request) => {
      const context = commandContextOf(request);
      const { adminEmail, adminPassword, ...fields } = request.body;
      if (adminPassword !== undefined) await deps.firstAdmin.check(fields.name, adminPassword);
      const created = await deps.commands.create(fields, context);
      // From the command's resulting state: a lagging read model cannot make a create a 404.
      const tenant = createdTenantView(created.tenant, created.createdAt);
      if (adminEmail && adminPassword) await deps.firstAdmin.create(tenant.name, adminEmail, adminPassword, context);
      return { kind: 'item', data: view(tenant) };
    },
  });

  registerVersioned(app, {
    ...common,
    method: 'GET',
    path: '/tenants/:id',
    summary: 'Read a tenant by id or name',
    params: idParams,
    answers: { kind: 'item', item: tenantSchema },
    errors: ['NOT_FOUND'],
    handler: async (request) => ({ kind: 'item', data: view(await findOr404(request.params.id)) }),
  });

  registerVersioned(app, {
    ...common,
    method: 'PUT',
    path: '/tenants/:id',
    summary: 'Update a tenant',
    params: idParams,
    body: updateBody,
    answers: { kind: 'item', item: tenantSchema },
    errors: ['NOT_FOUND'],
    handler: async (request) => {
      const tenant = await findOr404(request.params.id);
      const result = await deps.commands.update(tenant, request.body, commandContextOf(request));
      if (result.state.status !== 'active') throw notFound('Tenant');
      // From the command's resulting state: never stale, whatever the projection's lag.
      return { kind: 'item', data: view({ ...tenant, displayName: result.state.displayName, updatedAt: changedAt(result, tenant.updatedAt) }) };
    },
  });

  registerVersioned(app, {
    ...common,
    method: 'DELETE',
    path: '/tenants/:id',
    summary: 'Delete a tenant (soft; its name stays reserved)',
    params: idParams,
    answers: { kind: 'deleted' },
    errors: ['NOT_FOUND', 'VALIDATION_ERROR'],
    handler: async (request) => {
      const tenant = await findOr404(request.params.id);
      await deps.commands.delete(tenant, commandContextOf(request));
      return { kind: 'deleted' };
    },
  });
}
