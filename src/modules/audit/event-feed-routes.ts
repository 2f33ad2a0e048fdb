import { Readable } from 'node:stream';
import { z } from 'zod';
import { publicEventSchema } from '../../platform/bus/public-event.ts';
import { ok, okBody } from '../../platform/http/envelopes.ts';
import { permission, route } from '../../platform/http/route.ts';
import { NDJSON, wantsNdjson } from '../../platform/http/ndjson.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import type { EventFeed } from './event-feed.ts';
import { isoInstant } from './routes.ts';

const MAX_POSITION = (1n << 63n) - 1n;

const feedQuery = z.object({
  after: z
    .string()
    .regex(/^\d{1,19}$/, 'a position: a non-negative decimal integer')
    .transform((text) => BigInt(text))
    .refine((position) => position <= MAX_POSITION, 'a position fits in 63 bits')
    .optional()
    .describe("a position from `next` or from an event of this tenant (0: the start); default: the start"),
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('events per page, 1 to 1000 (ignored by the NDJSON stream)'),
  types: z
    .string()
    .max(5000)
    .transform((text) => text.split(',').map((type) => type.trim()).filter(Boolean))
    .pipe(z.array(z.string().max(100)).min(1).max(100))
    .optional()
    .describe('comma-separated event types of the catalogue (docs/events.md)'),
  streamPrefix: z.string().min(1).max(300).optional().describe('only streams whose id starts with it, e.g. `user-acme.`'),
  from: isoInstant('start').optional().describe('occurredAt at or after; ISO 8601, a date alone starts at 00:00:00.000Z'),
  to: isoInstant('end').optional().describe('occurredAt at or before; ISO 8601, a date alone ends at 23:59:59.999Z'),
});

const pageSchema = z.object({
  events: z.array(publicEventSchema).describe("the topic's envelope (docs/events.md): sensitive fields left out, erased personal fields \"[ERASED]\""),
  next: z.string().nullable().describe('pass as `after` for the next page; null when nothing follows yet'),
});

/** GET /api/events (view:audit): the tenant's own event history, paged or as one NDJSON stream. */
export function registerEventFeedRoutes(app: HttpServer, feed: EventFeed): void {
  route(app, {
    tags: ['Audit'],
    access: permission('view:audit'),
    method: 'GET',
    url: '/api/events',
    summary: "The tenant's events in the topic's envelope, oldest first; with Accept: application/x-ndjson, all of them as one stream",
    query: feedQuery,
    responses: { 200: okBody(pageSchema) },
    alternatives: { [NDJSON]: publicEventSchema.describe('one envelope per line, every matching event up to the head when the stream started') },
    handler: async (request, reply) => {
      const { limit, ...query } = request.query;
      const tenant = tenantOf(request).name;
      if (!wantsNdjson(request.headers.accept)) return ok(await feed.page(tenant, query, limit));
      const lines = await feed.stream(tenant, query);
      // highWaterMark 1: the next batch is read only once the socket took the previous one.
      return reply.type(NDJSON).send(Readable.from(lines, { objectMode: true, highWaterMark: 1 }));
    },
  });
}
