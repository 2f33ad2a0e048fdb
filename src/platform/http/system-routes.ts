import type { Queryable } from '../db/pool.ts';
import type { Metrics } from '../metrics.ts';
import type { HttpServer } from './server.ts';

/** Liveness, readiness (PostgreSQL answers and projections run) and Prometheus metrics. */
export function registerSystemRoutes(app: HttpServer, deps: { db: Queryable; metrics: Metrics; projectionsRunning: () => boolean }): void {
  const system = { tags: ['System'] };
  app.get('/health/live', { schema: { ...system, summary: 'The process is up' } }, async () => ({ status: 'ok' }));

  app.get('/health/ready', { schema: { ...system, summary: 'PostgreSQL answers and projections are running' } }, async (_request, reply) => {
    const database = await deps.db
      .query('select 1')
      .then(() => true)
      .catch(() => false);
    const projections = deps.projectionsRunning();
    const ready = database && projections;
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', checks: { database, projections } });
  });

  app.get('/metrics', { schema: { ...system, summary: 'Prometheus metrics' } }, async (_request, reply) => {
    const body = await deps.metrics.registry.metrics();
    return reply.type(deps.metrics.registry.contentType).send(body);
  });
}
