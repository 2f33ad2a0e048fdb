import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Metrics } from '../metrics.ts';
import { notFound, type ErrorStatuses } from '../errors.ts';
import { createErrorHandling } from './error-handler.ts';
import { documentRateLimits } from './rate-limit/openapi.ts';
import { publicAccess, route } from './route.ts';
import './route-config.ts';

export interface HttpServerOptions {
  logger: Logger;
  metrics: Metrics;
  bodyLimit: number;
  /** Peers allowed to name the client address by X-Forwarded-For (config HTTP_TRUST_PROXY). */
  trustProxy: boolean | string;
  issuer: string;
  version: string;
  /** Every domain code and its status (src/error-statuses.ts). */
  errorStatuses: ErrorStatuses;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Routes document the statuses of the codes they declare from this table. */
    errorStatuses: ErrorStatuses;
  }
}

/**
 * Fastify with zod validation and serialization, the one error handler, request ids, metrics,
 * and the OpenAPI document generated from the same zod schemas the routes validate with.
 */
export async function createHttpServer(options: HttpServerOptions) {
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    bodyLimit: options.bodyLimit,
    trustProxy: options.trustProxy,
    requestIdHeader: 'x-request-id',
    genReqId: () => crypto.randomUUID(),
    // One access-log line per request, written by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  const { errorHandler, sendError } = createErrorHandling(options.errorStatuses);
  app.decorate('errorStatuses', options.errorStatuses);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) => sendError(request, reply, notFound('Route')));

  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    options.metrics.httpRequests.inc({ method: request.method, route, status: reply.statusCode });
    options.metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    request.log.info(
      { method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime), tenant: request.headers['x-tenant'] },
      'request completed',
    );
  });

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'IAM service',
        version: options.version,
        description:
          'Multi-tenant identity and access management. Send the tenant (realm) in the x-tenant header. ' +
          'Decisions where the contract is silent are listed in docs/decisions.md.',
      },
      servers: [{ url: options.issuer }],
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
    },
    transform: jsonSchemaTransform,
    // Schemas with an id (the recursive trees) become components; then the rate-limit documentation.
    transformObject: (document) => ('openapiObject' in document ? documentRateLimits(jsonSchemaTransformObject(document)) : document.swaggerObject),
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/api/docs' });
  route(app, {
    tags: ['System'],
    access: publicAccess,
    tenant: 'none',
    method: 'GET',
    url: '/api/openapi.json',
    summary: 'This OpenAPI 3.1 document',
    responses: { 200: z.looseObject({ openapi: z.string(), info: z.looseObject({ title: z.string(), version: z.string() }), paths: z.record(z.string(), z.unknown()) }) },
    handler: async () => app.swagger() as never,
  });
  return app;
}

export type HttpServer = Awaited<ReturnType<typeof createHttpServer>>;
