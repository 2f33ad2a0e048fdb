import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { notFound } from '../../platform/errors.ts';
import { ok, okBody } from '../../platform/http/envelopes.ts';
import { principalOf } from '../../platform/http/authentication.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import { permission, route } from '../../platform/http/route.ts';
import { idParams, pageQuery } from '../../platform/http/schemas.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import { registerVersioned } from '../../platform/http/versioned.ts';
import type { UserCommands } from './commands.ts';
import { MAX_PASSWORD_LENGTH } from './passwords.ts';
import { createdUserView, type UserDetail, type UserQueries } from './queries.ts';
import {
  asOfQuery,
  emailSchema,
  nameSchema as name,
  userDetailSchema,
  userRoleSchema,
  userSummarySchema,
  userUpdatedSchema,
  usernameSchema as username,
} from './schemas.ts';

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
  /** Waits for the reactions to a write (the deleted user's sessions revoked) to be readable. */
  awaitReactions: (position: bigint) => Promise<void>;
  /** The user at an earlier instant (compliance history, audit module). */
  asOf: (request: FastifyRequest, userId: string, at: Date) => Promise<UserDetail>;
}

/** The spec's Users section (manage:users), with its /api/v1 twin for list/get/create/update/delete. */
export function registerUserRoutes(app: HttpServer, deps: UserRouteDeps): void {
  const guard = { tags: ['Users'], access: permission('manage:users') };
  const detailOr404 = async (tenant: string, id: string) => (await deps.queries.get(tenant, id)) ?? Promise.reject(notFound('User'));

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/users',
    summary: 'List users (search over email, username, first and last name; filter by role and status)',
    query: listQuery,
    answers: { kind: 'page', item: userSummarySchema },
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
    answers: { kind: 'item', item: userDetailSchema, status: 201 },
    errors: ['EMAIL_TAKEN', 'USERNAME_TAKEN'],
    // Answered from the command's resulting state: a lagging read model cannot make it a 404.
    handler: async (request) => {
      const { user, createdAt } = await deps.commands.create(tenantOf(request).name, request.body, commandContextOf(request), principalOf(request).permissions);
      return { kind: 'item', data: createdUserView(user, createdAt) };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/users/:id',
    summary: 'Read a user with two-factor status, phone number and last login; with asOf, as it was then',
    params: idParams,
    query: asOfQuery,
    answers: { kind: 'item', item: userDetailSchema },
    errors: ['NOT_FOUND'],
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
    answers: { kind: 'item', item: userUpdatedSchema },
    errors: ['NOT_FOUND', 'EMAIL_TAKEN', 'USERNAME_TAKEN'],
    // From the command's resulting state, like the create: never stale, whatever the projection's lag.
    handler: async (request) => {
      const { state: user } = await deps.commands.update(tenantOf(request).name, request.params.id, request.body, commandContextOf(request), principalOf(request).permissions);
      if (user.status !== 'active') throw notFound('User');
      const updated = Object.fromEntries(Object.keys(request.body).map((key) => [key, user[key as keyof typeof user]]));
      return { kind: 'item', data: { id: user.userId, email: user.email, ...updated, enabled: user.enabled } };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'DELETE',
    path: '/users/:id',
    summary: 'Soft-delete a user: credentials removed, sessions invalidated, e-mail reusable',
    params: idParams,
    answers: { kind: 'deleted' },
    errors: ['NOT_FOUND'],
    handler: async (request) => {
      const { position } = await deps.commands.delete(tenantOf(request).name, request.params.id, commandContextOf(request), principalOf(request).permissions);
      // "sessions invalidated": answered once the revocations the deletion caused are readable.
      await deps.awaitReactions(position);
      return { kind: 'deleted' };
    },
  });

  route(app, {
    tags: ['Users'],
    access: permission('admin:all'),
    method: 'POST',
    url: '/api/users/:id/erase',
    summary:
      'GDPR erasure (crypto-shredding, docs/erasure.md): deletes the user if still active, then destroys the key of its personal data, ' +
      'so email, username, names and session addresses read "[ERASED]" everywhere, replays included; the email is free again. Idempotent.',
    params: idParams,
    responses: { 200: okBody(z.object({ erased: z.literal(true) })) },
    errors: ['NOT_FOUND'],
    handler: async (request) => {
      const { position } = await deps.commands.erase(tenantOf(request).name, request.params.id, commandContextOf(request));
      // Like a deletion: answered once the sessions it ended are readable as revoked.
      await deps.awaitReactions(position);
      return ok({ erased: true } as const);
    },
  });

  const roles = { ...guard, params: idParams, errors: ['NOT_FOUND'] };

  route(app, {
    ...roles,
    method: 'GET',
    url: '/api/users/:id/roles',
    summary: "A user's roles",
    responses: { 200: okBody(z.array(userRoleSchema)) },
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      await detailOr404(tenant, request.params.id);
      return ok(await deps.queries.roles(tenant, request.params.id));
    },
  });

  route(app, {
    ...roles,
    method: 'POST',
    url: '/api/users/:id/roles',
    summary: 'Assign a role (a no-op when already assigned)',
    body: roleBody,
    responses: { 200: okBody(z.object({ assigned: z.literal(true) })) },
    errors: ['NOT_FOUND', 'SELF_ROLE_CHANGE'],
    handler: async (request) => {
      await deps.commands.assignRole(tenantOf(request).name, request.params.id, request.body.roleId, commandContextOf(request), principalOf(request).permissions);
      return ok({ assigned: true } as const);
    },
  });

  route(app, {
    ...roles,
    method: 'DELETE',
    url: '/api/users/:id/roles',
    summary: 'Remove a role (a no-op when absent)',
    body: roleBody,
    responses: { 200: okBody(z.object({ removed: z.literal(true) })) },
    errors: ['NOT_FOUND', 'SELF_ROLE_CHANGE'],
    handler: async (request) => {
      await deps.commands.removeRole(tenantOf(request).name, request.params.id, request.body.roleId, commandContextOf(request), undefined, principalOf(request).permissions);
      return ok({ removed: true } as const);
    },
  });
}
