import { z } from 'zod';
import { AppError, notFound } from '../../platform/errors.ts';
import { principalOf, requireAuthentication, requirePermission } from '../../platform/http/authentication.ts';
import { ok, pagination, successOnly } from '../../platform/http/envelopes.ts';
import { commandContextOf, type ReadYourWrites } from '../../platform/http/request-context.ts';
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

export interface SessionRouteDeps {
  commands: SessionCommands;
  queries: SessionQueries;
  readYourWrites: ReadYourWrites;
}

/** The spec's session administration (manage:sessions) and a user's own sessions (any valid token). */
export function registerSessionRoutes(app: HttpServer, deps: SessionRouteDeps): void {
  const admin = { onRequest: [requirePermission('manage:sessions')] };
  const tags = ['Sessions'];
  const security = [{ bearer: [] }];

  app.get('/api/admin/sessions', { ...admin, schema: { tags, security, summary: 'Sessions, newest activity first (flat body)', querystring: adminListQuery } }, async (request) => {
    const { page, limit } = request.query;
    const { sessions, total, stats } = await deps.queries.list(tenantOf(request).name, request.query);
    return { sessions, pagination: pagination(page, limit, total), stats };
  });

  app.get('/api/admin/sessions/:id', { ...admin, schema: { tags, security, summary: 'Not implemented: 405', params: idParams } }, async () => {
    throw new AppError('METHOD_NOT_ALLOWED', 405, 'Reading a single session is not supported; list with ?userId=');
  });

  app.delete('/api/admin/sessions/:id', { ...admin, schema: { tags, security, summary: 'Revoke a session (repeatable)', params: idParams } }, async (request) => {
    const tenant = tenantOf(request).name;
    if (!(await deps.queries.get(tenant, request.params.id))) throw notFound('Session');
    const { position } = await deps.commands.revoke(tenant, request.params.id, 'admin', commandContextOf(request));
    await deps.readYourWrites(position, ['sessions']);
    return successOnly();
  });

  const own = { onRequest: [requireAuthentication] };
  app.get('/api/user/security/sessions', { ...own, schema: { tags, security, summary: 'My active sessions', querystring: z.object(pageQuery(50)) } }, async (request) => {
    const { page, limit } = request.query;
    const { sessions, total } = await deps.queries.list(tenantOf(request).name, { page, limit, userId: principalOf(request).subject, status: 'active' });
    const current = principalOf(request).sessionId;
    return ok({ data: sessions.map((s) => ({ ...s, current: s.id === current })), pagination: pagination(page, limit, total) });
  });

  app.delete('/api/user/security/sessions/:id', { ...own, schema: { tags, security, summary: 'Revoke one of my sessions', params: idParams } }, async (request) => {
    const tenant = tenantOf(request).name;
    const session = await deps.queries.get(tenant, request.params.id);
    if (!session || session.userId !== principalOf(request).subject) throw notFound('Session');
    const { position } = await deps.commands.revoke(tenant, session.id, 'user', commandContextOf(request));
    await deps.readYourWrites(position, ['sessions']);
    return ok({ revoked: true });
  });
}
