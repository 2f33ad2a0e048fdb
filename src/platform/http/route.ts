import { STATUS_CODES } from 'node:http';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { z, ZodType } from 'zod';
import { WriteLog, recordingWrites, type ReadYourWrites } from '../projections/read-your-writes.ts';
import { requireAuthentication, requirePermission, requirePlatformAdmin } from './authentication.ts';
import { errorBodySchemas, type ErrorEnvelope } from './envelopes.ts';
import { wireOf } from './error-statuses.ts';
import { parserRefusalResponses } from './parser-refusals.ts';
import type { HttpServer } from './server.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Waits before a write answers (src/platform/projections/read-your-writes.ts); absent in a bare server. */
    readYourWrites?: ReadYourWrites;
  }
}

type Hook = (request: FastifyRequest) => Promise<void>;
/** A check that may finish without a promise (a cached token and roles): it throws to refuse. */
type AccessHook = (request: FastifyRequest) => void | Promise<void>;

/**
 * An access check as a fastify hook in the callback form, so that a check finished without a
 * promise costs no promise and no tick (fastify turns what it throws into the error answer).
 */
const callbackHook =
  (check: AccessHook) =>
  (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
    const checking = check(request);
    if (checking) checking.then(() => done(), done);
    else done();
  };

/** Who may call a route: the checks run before validation, and the codes they can answer. */
export interface Access {
  hooks: AccessHook[];
  errors: string[];
  /** Shown in the operation's description. */
  requires?: string;
}

export const publicAccess: Access = { hooks: [], errors: [] };
const tokenErrors = ['TOKEN_INVALID', 'TOKEN_EXPIRED'];
export const authenticated: Access = { hooks: [requireAuthentication], errors: tokenErrors, requires: 'a bearer access token' };
/** Every one of the named permissions. */
export const permission = (...names: string[]): Access => ({
  hooks: [requirePermission(...names)],
  errors: [...tokenErrors, 'PERMISSION_DENIED'],
  requires: names.join(' and '),
});
export const platformAdmin = (platformTenant: string | undefined): Access => ({
  hooks: [requirePlatformAdmin(platformTenant)],
  errors: [...tokenErrors, 'PERMISSION_DENIED'],
  requires: 'admin:all in the platform tenant',
});

type Infer<S> = S extends ZodType ? z.infer<S> : unknown;
type Responses = Record<number, ZodType>;

/** A route declared in one place: request schemas, who may call it, every answer by status. */
export interface RouteDeclaration<P, Q, B, R extends Responses> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  tags: string[];
  summary: string;
  access: Access;
  /** Whether the route needs x-tenant (default: every /api route does); `credential`: optional, the credential names it. */
  tenant?: 'required' | 'none' | 'credential';
  /** The route family's error body (default canonical; v1 under /api/v1). */
  envelope?: ErrorEnvelope;
  params?: P;
  query?: Q;
  body?: B;
  /** Success answers by status; one status is set on the reply for the handler. */
  responses: R;
  /** Domain codes the handler can raise beyond those implied by access, tenant and request schemas. */
  errors?: string[];
  /** The success answers' media type when not JSON (text, HTML). */
  contentType?: string;
  /** Further media types of the 200 answer, chosen by Accept (a stream of NDJSON lines), with their schemas. */
  alternatives?: Record<string, ZodType>;
  preValidation?: Hook;
  /**
   * The route appends nothing (a query), or a function that says so of a request: such requests
   * keep no write log, so while no other request records its writes they run without the promise
   * hook that recording turns on (src/platform/projections/read-your-writes.ts).
   */
  readOnly?: true | ((request: FastifyRequest<{ Params: Infer<P>; Querystring: Infer<Q>; Body: Infer<B> }>) => boolean);
  /** May answer without a promise (a `readOnly` route whose answer is in memory: no promise, no tick). */
  handler: (
    request: FastifyRequest<{ Params: Infer<P>; Querystring: Infer<Q>; Body: Infer<B> }>,
    reply: FastifyReply,
  ) => z.input<R[keyof R]> | FastifyReply | Promise<z.input<R[keyof R]> | FastifyReply>;
}

const documented = (statuses: string[], codes: string[]) => `${statuses.join(', ')}: ${codes.join(', ')}`;

/** Success answers described by their status text unless the schema says more; in their media type(s) when not JSON alone. */
function successResponses(responses: Responses, contentType: string | undefined, alternatives: Record<string, ZodType> = {}) {
  return Object.fromEntries(
    Object.entries(responses).map(([status, schema]) => {
      const description = schema.description ?? STATUS_CODES[status] ?? status;
      const others = status === '200' ? Object.entries(alternatives).map(([type, other]) => [type, { schema: other }]) : [];
      if (!contentType && others.length === 0) return [status, schema.describe(description)];
      return [status, { description, content: Object.fromEntries([[contentType ?? 'application/json', { schema }], ...others]) }];
    }),
  );
}

/** Every code a route can answer: declared ones and those its access, tenant and schemas imply. */
function errorCodes(route: RouteDeclaration<unknown, unknown, unknown, Responses>): string[] {
  const codes = [...route.access.errors, ...(route.errors ?? [])];
  if (route.url.startsWith('/api/') && route.tenant !== 'none') codes.push('MISSING_TENANT', 'TENANT_NOT_FOUND');
  if (route.params || route.query || route.body) codes.push('VALIDATION_ERROR');
  if (route.body) codes.push('PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  if (route.method !== 'GET') codes.push('CONFLICT'); // a write that keeps losing a concurrency race
  return [...new Set([...codes, 'INTERNAL_ERROR', 'REQUEST_TIMEOUT', 'SERVICE_UNAVAILABLE'])];
}

/** The error answers of a route, grouped by status, each with the family's body. */
function errorResponses(app: HttpServer, route: RouteDeclaration<unknown, unknown, unknown, Responses>, envelope: ErrorEnvelope) {
  const byStatus = new Map<number, string[]>();
  for (const code of errorCodes(route)) {
    if (!Object.hasOwn(app.errorStatuses, code)) throw new Error(`${route.method} ${route.url} declares ${code}, which the error table does not map`);
    const wire = wireOf(app.errorStatuses, code);
    byStatus.set(wire.status, [...(byStatus.get(wire.status) ?? []), wire.code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => [status, errorBodySchemas[envelope].describe(documented([String(status)], [...new Set(codes)]))]),
  );
}

/**
 * Registers a route from its declaration. The OpenAPI document is generated from the same
 * declaration, so it lists every status the route answers. A request that appended answers (with
 * success or error) only once the read models of what it appended have caught up (bounded),
 * whatever path appended; a request of a `readOnly` route keeps no write log.
 */
export function route<P extends ZodType | undefined, Q extends ZodType | undefined, B extends ZodType | undefined, R extends Responses>(
  app: HttpServer,
  declaration: RouteDeclaration<P, Q, B, R>,
): void {
  const generic = declaration as unknown as RouteDeclaration<unknown, unknown, unknown, Responses>;
  const envelope = declaration.envelope ?? (declaration.url.startsWith('/api/v1/') ? 'v1' : 'canonical');
  const successStatuses = Object.keys(declaration.responses).map(Number);
  const onlyStatus = successStatuses.length === 1 ? successStatuses[0]! : undefined;
  const { requires } = declaration.access;
  const { readOnly } = declaration;
  const recorded = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const writes = new WriteLog();
    try {
      return await recordingWrites(writes, async () => generic.handler(request as never, reply));
    } finally {
      // A refusal can have written too (a lockout, a revoked session): it waits as well.
      await request.server.readYourWrites?.settle(writes);
    }
  };
  const answered = (reply: FastifyReply, body: unknown) => {
    if (body === reply) return reply;
    if (onlyStatus !== undefined && reply.statusCode === 200) void reply.status(onlyStatus);
    return body;
  };
  // The declaration types the handler; fastify's own route types add nothing past this point.
  const options: RouteOptions = {
    method: declaration.method,
    url: declaration.url,
    schema: {
      tags: declaration.tags,
      summary: declaration.summary,
      ...(requires ? { description: `Requires ${requires}.`, security: [{ bearer: [] }] } : {}),
      ...(declaration.params ? { params: declaration.params } : {}),
      ...(declaration.query ? { querystring: declaration.query } : {}),
      ...(declaration.body ? { body: declaration.body } : {}),
      response: { ...parserRefusalResponses, ...errorResponses(app, generic, envelope), ...successResponses(declaration.responses, declaration.contentType, declaration.alternatives) },
    },
    config: { errorEnvelope: envelope, ...(declaration.tenant ? { tenant: declaration.tenant } : {}), ...(declaration.contentType === 'text/html' ? { page: true } : {}) },
    onRequest: declaration.access.hooks.map(callbackHook),
    ...(declaration.preValidation ? { preValidation: declaration.preValidation } : {}),
    handler: (request: FastifyRequest, reply: FastifyReply): never => {
      // Arrows inline, no named closure per request (the tsx loader wraps each in __name() as it is made).
      if (!(readOnly === true || readOnly?.(request as never))) return recorded(request, reply).then((body) => answered(reply, body)) as never;
      const body = generic.handler(request as never, reply);
      // An answer without a promise is sent by fastify as returned; a reply the handler sent itself
      // is returned as undefined (fastify then leaves it), an undefined answer as before.
      if (body instanceof Promise || body === undefined) return Promise.resolve(body).then((settled) => answered(reply, settled)) as never;
      return (body === reply ? undefined : answered(reply, body)) as never;
    },
  };
  app.route(options as never);
}
