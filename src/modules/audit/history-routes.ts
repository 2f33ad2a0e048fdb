import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../../platform/clock.ts';
import { AppError, notFound, validationError } from '../../platform/errors.ts';
import { principalOf, requirePermission } from '../../platform/http/authentication.ts';
import { ok } from '../../platform/http/envelopes.ts';
import { idParams } from '../../platform/http/schemas.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import { grants } from '../roles/permissions.ts';
import type { UserDetail } from '../users/queries.ts';
import type { UserHistory } from './user-history.ts';

const viewAudit = requirePermission('view:audit');

/** Compliance reads need both view:audit and manage:users (decisions.md, Audit log and history). */
export async function requireComplianceAccess(request: FastifyRequest): Promise<void> {
  await viewAudit(request);
  if (!grants(principalOf(request).permissions, 'manage:users')) throw new AppError('PERMISSION_DENIED', 403, 'Permission manage:users is required');
}

/** `?asOf=` of GET /api/users/{id}: an ISO 8601 instant with Z or an offset. */
export const asOfQuery = z.object({
  asOf: z.iso
    .datetime({ offset: true })
    .transform((text) => new Date(text))
    .optional()
    .describe('ISO 8601 instant (view:audit too): the user as it was then, folded from its events'),
});

/** The user as it was at `asOf`; 404 when it did not exist then, 400 for an instant still to come. */
export function userAsOfHandler(history: UserHistory, clock: Clock) {
  return async (request: FastifyRequest, userId: string, asOf: Date): Promise<UserDetail> => {
    if (!grants(principalOf(request).permissions, 'view:audit')) throw new AppError('PERMISSION_DENIED', 403, 'Permission view:audit is required');
    if (asOf > clock.now()) throw validationError('asOf is in the future', [{ path: 'querystring.asOf', message: 'must not be in the future' }]);
    return (await history.asOf(tenantOf(request).name, userId, asOf)) ?? Promise.reject(notFound('User'));
  };
}

/** GET /api/users/{id}/history: the user's own events, oldest first, secrets masked. */
export function registerUserHistoryRoutes(app: HttpServer, history: UserHistory): void {
  app.get(
    '/api/users/:id/history',
    {
      schema: { tags: ['Audit'], security: [{ bearer: [] }], summary: "A user's events, oldest first (view:audit and manage:users)", params: idParams },
      onRequest: [requireComplianceAccess],
    },
    async (request) => {
      const events = await history.events(tenantOf(request).name, request.params.id);
      if (events.length === 0) throw notFound('User');
      return ok(events);
    },
  );
}
