import { z } from 'zod';
import { platformError } from '../../platform/errors.ts';
import { permission, route } from '../../platform/http/route.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import { AUDIT_TOTAL_CAP, type AuditQueries } from './queries.ts';
import { AUDIT_STATUSES, PERMISSION_CHECK } from './vocabulary.ts';

const MAX_LIMIT = 500;
/** Set when at least `total` entries match but counting stopped there (AUDIT_TOTAL_CAP). */
const TOTAL_CAPPED_HEADER = 'x-total-count-capped';
const DAY_MS = 86_400_000;

/** ISO 8601 instant (with Z or an offset) or a date alone, which stands for the whole UTC day. */
export const isoInstant = (end: 'start' | 'end') =>
  z.union([z.iso.date(), z.iso.datetime({ offset: true })]).transform((text) => {
    const at = new Date(text.length === 10 ? `${text}T00:00:00.000Z` : text);
    return text.length === 10 && end === 'end' ? new Date(at.getTime() + DAY_MS - 1) : at;
  });

/** Strict: a filter the listing does not know (status=, resource=) is a 400, never silently ignored. */
const listQuery = z.strictObject({
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

/** The spec's Audit log entry. */
const entrySchema = z.object({
  id: z.string(),
  action: z.string(),
  userId: z.string().nullable().describe('the actor; null for the system'),
  resource: z.string().nullable(),
  resourceId: z.string().nullable(),
  status: z.enum(AUDIT_STATUSES),
  errorCode: z.string().nullable(),
  errorMessage: z.string().nullable(),
  clientIp: z.string().nullable(),
  userAgent: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()).nullable().describe('before/after summaries; secrets "[REDACTED]"'),
  createdAt: z.string(),
});
const listBody = z.object({
  data: z.array(entrySchema),
  pagination: z.object({ total: z.number().int(), limit: z.number().int(), offset: z.number().int(), hasMore: z.boolean() }),
});

/** The spec's Audit logs: GET /api/logs/audit (view:audit), a flat `{data, pagination}` body. */
export function registerAuditLogRoutes(app: HttpServer, queries: AuditQueries): void {
  route(app, {
    tags: ['Audit'],
    access: permission('view:audit'),
    method: 'GET',
    url: '/api/logs/audit',
    summary:
      `Audit log entries of the tenant, newest first. pagination.total is exact up to ${AUDIT_TOTAL_CAP.toLocaleString('en')} matching entries ` +
      `(or offset + limit + 1 when paging deeper); beyond, it is that lower bound and the answer carries ${TOTAL_CAPPED_HEADER}: true. hasMore is always exact.`,
    query: listQuery,
    responses: { 200: listBody },
    handler: async (request, reply) => {
      const { offset, limit, action, userId, startDate, endDate, excludeActions } = request.query;
      const excluded = excludeActions ?? (action === undefined ? [PERMISSION_CHECK] : []);
      const { items, total, totalCapped } = await queries.list(tenantOf(request).name, { offset, limit, action, userId, from: startDate, to: endDate, excludeActions: excluded });
      // The body keeps the spec's shape; the header says when total is a lower bound.
      if (totalCapped) void reply.header(TOTAL_CAPPED_HEADER, 'true');
      return { data: items, pagination: { total, limit, offset, hasMore: offset + items.length < total } };
    },
  });

  // The log is append-only: no method changes it, whatever the path below it. These refusals are
  // not operations of the API, so they stay out of the OpenAPI document.
  for (const url of ['/api/logs/audit', '/api/logs/audit/*']) {
    app.route({
      method: ['PUT', 'PATCH', 'DELETE', 'POST'],
      url,
      schema: { hide: true },
      handler: async (_request, reply) => {
        void reply.header('allow', 'GET');
        throw platformError('METHOD_NOT_ALLOWED', 'The audit log is append-only');
      },
    });
  }
}
