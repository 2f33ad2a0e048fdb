import { z } from 'zod';
import type { Queryable } from '../db/pool.ts';
import type { Metrics } from '../metrics.ts';
import { publicAccess, route } from './route.ts';
import type { HttpServer } from './server.ts';

const readiness = z.object({
  status: z.enum(['ok', 'unavailable']),
  checks: z.object({ database: z.boolean(), projections: z.boolean() }),
});

/** Liveness, readiness (PostgreSQL answers and projections run) and Prometheus metrics. */
export function registerSystemRoutes(app: HttpServer, deps: { db: Queryable; metrics: Metrics; projectionsRunning: () => boolean }): void {
  const system = { tags: ['System'], access: publicAccess, method: 'GET' as const, readOnly: true as const };

  route(app, { ...system, url: '/health/live', summary: 'The process is up', responses: { 200: z.object({ status: z.literal('ok') }) }, handler: async () => ({ status: 'ok' as const }) });

  route(app, {
    ...system,
    url: '/health/ready',
    summary: 'PostgreSQL answers and projections are running',
    responses: { 200: readiness, 503: readiness },
    handler: async (_request, reply) => {
      const database = await deps.db
        .query('select 1')
        .then(() => true)
        .catch(() => false);
      const projections = deps.projectionsRunning();
      const ready = database && projections;
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', checks: { database, projections } });
    },
  });

  route(app, {
    ...system,
    url: '/metrics',
    summary: 'Prometheus metrics',
    contentType: 'text/plain',
    responses: { 200: z.string().describe('Prometheus text exposition format') },
    handler: async (_request, reply) => {
      const body = await deps.metrics.registry.metrics();
      return reply.type(deps.metrics.registry.contentType).send(body);
    },
  });
}
