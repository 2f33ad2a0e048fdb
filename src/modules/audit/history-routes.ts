import { grants } from '../roles/index.ts';
import type { UserDetail } from '../users/index.ts';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../../platform/clock.ts';
import { notFound, platformError, validationError } from '../../platform/errors.ts';
import { principalOf } from '../../platform/http/authentication.ts';
import { ok, okBody } from '../../platform/http/envelopes.ts';
import { permission, route } from '../../platform/http/route.ts';
import { idParams } from '../../platform/http/schemas.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import type { UserHistory } from './user-history.ts';

const historyItemSchema = z.object({
  position: z.string().describe('global position of the event, a decimal string'),
  type: z.string(),
  occurredAt: z.string(),
  actor: z.string(),
  data: z.unknown().describe('the event data, secrets "[REDACTED]"'),
});

/** The user as it was at `asOf`; 404 when it did not exist then, 400 for an instant still to come. */
export function userAsOfHandler(history: UserHistory, clock: Clock) {
  return async (request: FastifyRequest, userId: string, asOf: Date): Promise<UserDetail> => {
    if (!grants(principalOf(request).permissions, 'view:audit')) throw platformError('PERMISSION_DENIED', 'Permission view:audit is required');
    if (asOf > clock.now()) throw validationError('asOf is in the future', [{ path: 'querystring.asOf', message: 'must not be in the future' }]);
    return (await history.asOf(tenantOf(request).name, userId, asOf)) ?? Promise.reject(notFound('User'));
  };
}

/** GET /api/users/{id}/history: the user's own events, oldest first, secrets masked. */
export function registerUserHistoryRoutes(app: HttpServer, history: UserHistory): void {
  route(app, {
    tags: ['Audit'],
    // Compliance reads need both (decisions.md, Audit log and history).
    access: permission('view:audit', 'manage:users'),
    method: 'GET',
    url: '/api/users/:id/history',
    summary: "A user's events, oldest first",
    params: idParams,
    responses: { 200: okBody(z.array(historyItemSchema)) },
    errors: ['NOT_FOUND'],
    handler: async (request) => {
      const events = await history.events(tenantOf(request).name, request.params.id);
      if (events.length === 0) throw notFound('User');
      return ok(events);
    },
  });
}
