import { z } from 'zod';
import { AppError } from '../../platform/errors.ts';
import { requirePermission } from '../../platform/http/authentication.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import type { AuditQueries } from './queries.ts';
import { PERMISSION_CHECK } from './vocabulary.ts';

const MAX_LIMIT = 500;
const DAY_MS = 86_400_000;

/** ISO 8601 instant (with Z or an offset) or a date alone, which stands for the whole UTC day. */
const isoInstant = (end: 'start' | 'end') =>
  z.union([z.iso.date(), z.iso.datetime({ offset: true })]).transform((text) => {
    const at = new Date(text.length === 10 ? `${text}T00:00:00.000Z` : text);
    return text.length === 10 && end === 'end' ? new Date(at.getTime() + DAY_MS - 1) : at;
  });

const listQuery = z.object({
  offset: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .default(50)
    .transform((limit) => Math.min(limit, MAX_LIMIT))
    .describe(`at most ${MAX_LIMIT}; a larger value is clamped`),
  action: z.string().max(100).optional().describe('a stored UPPER_SNAKE_CASE action name (dotted names match nothing)'),
  userId: z.string().max(100).optional().describe('the acting user'),
  startDate: isoInstant('start').optional().describe('ISO 8601, inclusive; a date alone starts at 00:00:00.000Z'),
  endDate: isoInstant('end').optional().describe('ISO 8601, inclusive to the millisecond; a date alone ends at 23:59:59.999Z'),
  excludeActions: z
    .string()
    .max(2000)
    .optional()
    .transform((text) => text?.split(',').map((name) => name.trim()).filter(Boolean))
    .pipe(z.array(z.string().max(100)).max(50).optional())
    .describe('comma-separated; default PERMISSION_CHECK (unless `action` is given); any value, even empty, replaces the default'),
});

/** The spec's Audit logs: GET /api/logs/audit (view:audit), a flat `{data, pagination}` body. */
export function registerAuditLogRoutes(app: HttpServer, queries: AuditQueries): void {
  app.get(
    '/api/logs/audit',
    {
      schema: { tags: ['Audit'], security: [{ bearer: [] }], summary: 'Audit log entries of the tenant, newest first', querystring: listQuery },
      onRequest: [requirePermission('view:audit')],
    },
    async (request) => {
      const { offset, limit, action, userId, startDate, endDate, excludeActions } = request.query;
      const excluded = excludeActions ?? (action === undefined ? [PERMISSION_CHECK] : []);
      const { items, total } = await queries.list(tenantOf(request).name, { offset, limit, action, userId, from: startDate, to: endDate, excludeActions: excluded });
      return { data: items, pagination: { total, limit, offset, hasMore: offset + items.length < total } };
    },
  );

  // The log is append-only: no method changes it, whatever the path below it.
  for (const url of ['/api/logs/audit', '/api/logs/audit/*']) {
    app.route({
      method: ['PUT', 'PATCH', 'DELETE', 'POST'],
      url,
      schema: { hide: true },
      handler: async (_request, reply) => {
        void reply.header('allow', 'GET');
        throw new AppError('METHOD_NOT_ALLOWED', 405, 'The audit log is append-only');
      },
    });
  }
}
