import { z } from 'zod';
import { AUDIT_ACTIONS } from '../audit/index.ts';
import { success, successBody, successOnly, successOnlyBody } from '../../platform/http/envelopes.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import { permission, route } from '../../platform/http/route.ts';
import { idParams } from '../../platform/http/schemas.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import { configSchemas } from './config.ts';
import { LOG_STREAM_STATUSES, LOG_STREAM_TYPES, type LogStreamType } from './events.ts';
import type { LogStreamsModule } from './module.ts';

const KNOWN_ACTIONS = new Set<string>(AUDIT_ACTIONS);
const eventFilters = z
  .array(z.string().refine((action) => KNOWN_ACTIONS.has(action), 'unknown audit action'))
  .max(AUDIT_ACTIONS.length)
  .transform((actions) => [...new Set(actions)]);
const name = z.string().trim().min(1).max(100);

const streamBody = <T extends LogStreamType>(type: T) =>
  z.strictObject({ name, type: z.literal(type), config: configSchemas[type], eventFilters: eventFilters.optional() });
const createBody = z.discriminatedUnion('type', [streamBody('WEBHOOK'), streamBody('OBJECT_STORE'), streamBody('LOG_PLATFORM_A'), streamBody('LOG_PLATFORM_B')]);
const updateBody = z.strictObject({
  name: name.optional(),
  config: z.record(z.string(), z.unknown()).optional().describe('the whole configuration of the stream type; a masked secret ("********") keeps the stored one'),
  status: z.enum(['active', 'paused']).optional().describe('active also resumes a stream in error'),
  eventFilters: eventFilters.nullable().optional().describe('null forwards every action'),
});

const timestamp = z.string().describe('ISO 8601');
const streamSchema = z.object({
  id: z.string(),
  name: z.string(),
  type: z.enum(LOG_STREAM_TYPES),
  status: z.enum(LOG_STREAM_STATUSES).describe('error once 10 consecutive deliveries failed (each after its 8th attempt; a delivered one resets the count)'),
  config: z.record(z.string(), z.unknown()).describe('secret members and credential headers masked as "********"'),
  eventFilters: z.array(z.string()).nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
});
const listedSchema = streamSchema.extend({ lastDeliveryAt: timestamp.nullable() });
const detailSchema = listedSchema.extend({ deliveryCount: z.number().int(), errorCount: z.number().int(), lastError: z.string().nullable() });

/** /api/log-streams (admin:all; `{success, data}`; decisions.md, Log streams). */
export function registerLogStreamRoutes(app: HttpServer, logStreams: LogStreamsModule): void {
  const guard = { tags: ['Log streams'], access: permission('admin:all'), envelope: 'success' as const };

  route(app, {
    ...guard,
    method: 'GET',
    url: '/api/log-streams',
    summary: 'List log streams (configurations masked)',
    responses: { 200: successBody(z.array(listedSchema)) },
    handler: async (request) => success(await logStreams.list(tenantOf(request).name)),
  });

  route(app, {
    ...guard,
    method: 'POST',
    url: '/api/log-streams',
    summary: 'Create a log stream after a successful test delivery (action LOG_STREAM_TEST)',
    body: createBody,
    responses: { 201: successBody(streamSchema) },
    errors: ['STREAM_NAME_TAKEN', 'TEST_DELIVERY_FAILED'],
    handler: async (request) => success(await logStreams.create(tenantOf(request).name, request.body, commandContextOf(request))),
  });

  route(app, {
    ...guard,
    method: 'GET',
    url: '/api/log-streams/:id',
    summary: 'Read a log stream with its delivery figures',
    params: idParams,
    responses: { 200: successBody(detailSchema) },
    errors: ['NOT_FOUND'],
    handler: async (request) => success(await logStreams.get(tenantOf(request).name, request.params.id)),
  });

  route(app, {
    ...guard,
    method: 'PUT',
    url: '/api/log-streams/:id',
    summary: 'Change name, configuration, filters or status (paused, or active to resume)',
    params: idParams,
    body: updateBody,
    responses: { 200: successBody(streamSchema) },
    errors: ['NOT_FOUND', 'STREAM_NAME_TAKEN'],
    handler: async (request) => success(await logStreams.update(tenantOf(request).name, request.params.id, request.body, commandContextOf(request))),
  });

  route(app, {
    ...guard,
    method: 'DELETE',
    url: '/api/log-streams/:id',
    summary: 'Delete a log stream: delivery stops; the audit log keeps every entry',
    params: idParams,
    responses: { 200: successOnlyBody },
    errors: ['NOT_FOUND'],
    handler: async (request) => {
      await logStreams.delete(tenantOf(request).name, request.params.id, commandContextOf(request));
      return successOnly();
    },
  });
}
