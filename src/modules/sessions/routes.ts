import { z } from 'zod';
import { notFound, platformError } from '../../platform/errors.ts';
import { principalOf } from '../../platform/http/authentication.ts';
import { ok, okBody, pagination, paginationSchema, successOnly, successOnlyBody } from '../../platform/http/envelopes.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import { authenticated, permission, route } from '../../platform/http/route.ts';
import { idParams, pageQuery } from '../../platform/http/schemas.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import type { SessionCommands } from './commands.ts';
import type { SessionQueries } from './queries.ts';

const adminListQuery = z.object({
  ...pageQuery(50),
  userId: z.string().max(100).optional(),
  status: z.enum(['active', 'revoked']).optional(),
});

const timestamp = z.string().describe('ISO 8601');
const sessionSchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  userId: z.string(),
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  device: z.string(),
  revoked: z.boolean(),
  status: z.enum(['active', 'revoked', 'expired']),
  createdAt: timestamp,
  updatedAt: timestamp,
  expiresAt: timestamp,
  user: z.object({ email: z.string().nullable(), firstName: z.string().nullable(), lastName: z.string().nullable() }),
});

export interface SessionRouteDeps {
  commands: SessionCommands;
  queries: SessionQueries;
}

/** The spec's session administration (manage:sessions) and a user's own sessions (any valid token). */
export function registerSessionRoutes(app: HttpServer, deps: SessionRouteDeps): void {
  const admin = { tags: ['Sessions'], access: permission('manage:sessions') };
  const own = { tags: ['Sessions'], access: authenticated };

  route(app, {
    ...admin,
    method: 'GET',
    url: '/api/admin/sessions',
    summary: 'Sessions, newest activity first (flat body)',
    query: adminListQuery,
    responses: {
      200: z.object({
        sessions: z.array(sessionSchema),
        pagination: paginationSchema,
        stats: z.object({ active: z.number().int(), last24h: z.number().int() }),
      }),
    },
    handler: async (request) => {
      const { page, limit } = request.query;
      const { sessions, total, stats } = await deps.queries.list(tenantOf(request).name, request.query);
      return { sessions, pagination: pagination(page, limit, total), stats };
    },
  });

  route(app, {
    ...admin,
    method: 'GET',
    url: '/api/admin/sessions/:id',
    summary: 'Not implemented: 405',
    params: idParams,
    responses: {},
    errors: ['METHOD_NOT_ALLOWED'],
    handler: async () => {
      throw platformError('METHOD_NOT_ALLOWED', 'Reading a single session is not supported; list with ?userId=');
    },
  });

  route(app, {
    ...admin,
    method: 'DELETE',
    url: '/api/admin/sessions/:id',
    summary: 'Revoke a session (repeatable)',
    params: idParams,
    envelope: 'success',
    responses: { 200: successOnlyBody },
    errors: ['NOT_FOUND'],
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      if (!(await deps.queries.get(tenant, request.params.id))) throw notFound('Session');
      await deps.commands.revoke(tenant, request.params.id, 'admin', commandContextOf(request));
      return successOnly();
    },
  });

  route(app, {
    ...own,
    method: 'GET',
    url: '/api/user/security/sessions',
    summary: 'My active sessions',
    query: z.object(pageQuery(50)),
    responses: { 200: okBody(z.object({ data: z.array(sessionSchema.extend({ current: z.boolean() })), pagination: paginationSchema })) },
    handler: async (request) => {
      const { page, limit } = request.query;
      const { sessions, total } = await deps.queries.list(tenantOf(request).name, { page, limit, userId: principalOf(request).subject, status: 'active' });
      const current = principalOf(request).sessionId;
      return ok({ data: sessions.map((s) => ({ ...s, current: s.id === current })), pagination: pagination(page, limit, total) });
    },
  });

  route(app, {
    ...own,
    method: 'DELETE',
    url: '/api/user/security/sessions/:id',
    summary: 'Revoke one of my sessions',
    params: idParams,
    responses: { 200: okBody(z.object({ revoked: z.literal(true) })) },
    errors: ['NOT_FOUND'],
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      const session = await deps.queries.get(tenant, request.params.id);
      if (!session || session.userId !== principalOf(request).subject) throw notFound('Session');
      await deps.commands.revoke(tenant, session.id, 'user', commandContextOf(request));
      return ok({ revoked: true } as const);
    },
  });
}
