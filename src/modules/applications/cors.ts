import type { FastifyRequest } from 'fastify';
import type { HttpServer } from '../../platform/http/server.ts';
import type { ApplicationQueries } from './queries.ts';

const ALLOWED_METHODS = 'GET, POST, PUT, DELETE, PATCH';
const MAX_AGE_SECONDS = '600';
const HEADER_NAMES = /^[A-Za-z0-9-]+(\s*,\s*[A-Za-z0-9-]+)*$/;

/**
 * CORS per application (spec, Authentication 7; decisions.md): an Origin registered in a tenant's
 * applications' allowedOrigins gets Access-Control-Allow-Origin (that origin, never `*`) with
 * credentials; any other origin gets no CORS header at all, so the browser keeps the answer from it.
 * A preflight carries no x-tenant, so it is answered for an origin any application registered
 * (the origin names its tenant); the actual request is answered only for an origin of the
 * request's tenant when it has one. The service's HTML pages (the authorization endpoint's sign-in
 * page, its form, the device and logout pages) never get one: RFC 9700 2.6 forbids CORS at the
 * authorization endpoint, which browsers navigate to rather than scripts fetch.
 */
export function registerApplicationCors(app: HttpServer, queries: Pick<ApplicationQueries, 'originRegistered'>): void {
  const originOf = (request: FastifyRequest) => {
    const origin = request.headers.origin;
    return typeof origin === 'string' && origin.length <= 2048 ? origin : null;
  };

  app.route({
    method: 'OPTIONS',
    url: '/*',
    schema: { hide: true },
    config: { tenant: 'none' },
    handler: async (request, reply) => {
      const origin = originOf(request);
      if (origin && (await queries.originRegistered(origin, null))) {
        const requested = request.headers['access-control-request-headers'];
        void reply.headers({
          'access-control-allow-origin': origin,
          'access-control-allow-credentials': 'true',
          'access-control-allow-methods': ALLOWED_METHODS,
          ...(typeof requested === 'string' && HEADER_NAMES.test(requested) ? { 'access-control-allow-headers': requested } : {}),
          'access-control-max-age': MAX_AGE_SECONDS,
        });
      }
      return reply.header('vary', 'Origin').status(204).send();
    },
  });

  // Callback form: an answer without Origin (every server-to-server call) costs no promise and no tick.
  app.addHook('onSend', (request, reply, payload, done) => {
    const origin = originOf(request);
    // Pages are navigations: no script of another origin reads them (RFC 9700 2.6), the authorization endpoint's included.
    if (!origin || request.method === 'OPTIONS' || request.routeOptions.config?.page) return done(null, payload);
    void reply.header('vary', 'Origin');
    queries.originRegistered(origin, request.tenant?.name ?? null).then((registered) => {
      if (registered) void reply.header('access-control-allow-origin', origin).header('access-control-allow-credentials', 'true');
      done(null, payload);
    }, done);
  });
}
