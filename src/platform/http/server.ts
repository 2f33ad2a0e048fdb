import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Metrics } from '../metrics.ts';
import { notFound, platformError, type ErrorStatuses } from '../errors.ts';
import { createErrorHandling } from './error-handler.ts';
import { unstorableInputRefusal } from './input-hygiene.ts';
import { jsonBodyParser } from './json-body.ts';
import { answerParserRefusal } from './parser-refusals.ts';
import { documentRateLimits } from './rate-limit/openapi.ts';
import type { RouteRule } from './rate-limit/tiers.ts';
import { requestLogger } from './request-logger.ts';
import { publicAccess, route } from './route.ts';
import { serializerCompiler, validatorCompiler } from './zod-compilers.ts';
import './route-config.ts';

export interface HttpServerOptions {
  logger: Logger;
  metrics: Metrics;
  bodyLimit: number;
  limits: ConnectionLimits;
  /** Peers allowed to name the client address by X-Forwarded-For (config HTTP_TRUST_PROXY). */
  trustProxy: boolean | string;
  issuer: string;
  version: string;
  /** Every domain code and its status (src/error-statuses.ts). */
  errorStatuses: ErrorStatuses;
  /** The route-to-tier table (src/rate-limit-rules.ts): which answers document 429. */
  rateLimitRules: readonly RouteRule[];
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Routes document the statuses of the codes they declare from this table. */
    errorStatuses: ErrorStatuses;
  }
}

/** What one client may hold of the server: time and header size (the body has bodyLimit). */
export interface ConnectionLimits {
  /** The whole route lifecycle; past it the client gets 503 REQUEST_TIMEOUT and the work is told to stop. */
  handlerTimeoutMs: number;
  /** Receiving the headers, and the whole request: a client that trickles them is cut off (408). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** All request headers together; larger: 431. */
  maxHeaderBytes: number;
}

/** How often node checks the header and request timeouts: well below the shortest of them. */
const checkInterval = (limits: ConnectionLimits) => Math.max(50, Math.min(1000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)));

declare module 'fastify' {
  interface FastifyRequest {
    /** Answers the request late (answerLateRequests); cleared once it has been answered. */
    lateAnswer: NodeJS.Timeout | null;
  }
}

/**
 * Answers 503 REQUEST_TIMEOUT when a request is still unanswered after `timeoutMs` (fastify's own
 * handlerTimeout stops counting once a request body has been read, so it misses slow handlers of
 * POST routes). The work itself goes on; what it sends later is dropped. The onResponse hook clears
 * the timer (no close listener per request); a connection closed unanswered is left alone.
 */
function answerLateRequests(request: FastifyRequest, reply: FastifyReply, timeoutMs: number, sendError: SendError): void {
  request.lateAnswer = setTimeout(() => {
    if (!reply.sent && !reply.raw.headersSent && !reply.raw.destroyed) void sendError(request, reply, platformError('REQUEST_TIMEOUT', 'The request took too long; retry later'));
  }, timeoutMs).unref();
}

type SendError = ReturnType<typeof createErrorHandling>['sendError'];

/** Links e-mailed to users carry a single-use token in the query: the access log never shows it. */
const withoutSecrets = (url: string) => url.replace(/([?&]token=)[^&]*/g, '$1[REDACTED]');

/**
 * Fastify with zod validation and serialization, the one error handler, request ids, metrics,
 * and the OpenAPI document generated from the same zod schemas the routes validate with.
 */
export async function createHttpServer(options: HttpServerOptions) {
  const { errorHandler, sendError } = createErrorHandling(options.errorStatuses);
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    bodyLimit: options.bodyLimit,
    requestTimeout: options.limits.requestTimeoutMs,
    keepAliveTimeout: options.limits.keepAliveTimeoutMs,
    http: { maxHeaderSize: options.limits.maxHeaderBytes, connectionsCheckingInterval: checkInterval(options.limits) },
    trustProxy: options.trustProxy,
    requestIdHeader: 'x-request-id',
    genReqId: () => crypto.randomUUID(),
    // One access-log line per request, written by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: requestLogger,
    // Long path segments reach the route, whose params schema refuses them in its own envelope.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
    // The router's own refusals (a malformed or overlong path segment) in the route family's envelope.
    clientErrorHandler: answerParserRefusal,
    frameworkErrors: (error, request, reply) =>
      sendError(request, reply, error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? notFound() : platformError('VALIDATION_ERROR', 'Malformed URL')),
  }).withTypeProvider<ZodTypeProvider>();

  // Node's own slow-header guard (default 60 s); it must not exceed the whole-request timeout.
  app.server.headersTimeout = Math.min(options.limits.headersTimeoutMs, options.limits.requestTimeoutMs);
  // JSON only (the token endpoint adds forms): a JSON body sent as text/plain is 415, not a string.
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser(app.getDefaultJsonParser('error', 'error')));
  // Shutting down: requests in flight finish, and their connections close after the answer
  // instead of idling until the keep-alive timeout holds the shutdown up.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // The global hooks take fastify's callback form: no promise and no extra tick per request.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('preValidation', (request, _reply, done) => done(unstorableInputRefusal(request)));
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorate('errorStatuses', options.errorStatuses);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) => sendError(request, reply, notFound('Route')));

  app.decorateRequest('lateAnswer', null);
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    answerLateRequests(request, reply, options.limits.handlerTimeoutMs, sendError);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    clearTimeout(request.lateAnswer ?? undefined);
    const route = request.routeOptions.url ?? 'unmatched';
    options.metrics.httpRequests.inc({ method: request.method, route, status: reply.statusCode });
    options.metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    // Through the service's logger, with the request id a request child would bind: no child made for it.
    if (options.logger.isLevelEnabled('info')) {
      options.logger.info(
        { reqId: request.id, method: request.method, url: withoutSecrets(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime), tenant: request.headers['x-tenant'] },
        'request completed',
      );
    }
    done();
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
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description:
              'An access token (RFC 9068 at+jwt) signed RS256 by default, or ES256 or HS256 as the deployment sets IAM_JWT_ALG. ' +
              'RS256 and ES256 tokens verify offline with /.well-known/jwks.json; any token through /api/auth/validate.',
          },
        },
      },
    },
    transform: jsonSchemaTransform,
    // Schemas with an id (the recursive trees) become components; then the rate-limit documentation.
    transformObject: (document) => ('openapiObject' in document ? documentRateLimits(jsonSchemaTransformObject(document), options.rateLimitRules) : document.swaggerObject),
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
