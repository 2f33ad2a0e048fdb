import { grants } from '../../roles/index.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z, type ZodType } from 'zod';
import { platformError } from '../../../platform/errors.ts';
import { principalOf } from '../../../platform/http/authentication.ts';
import { ok, okBody } from '../../../platform/http/envelopes.ts';
import { NDJSON, ndjsonChunks, wantsNdjson } from '../../../platform/http/ndjson.ts';
import { route } from '../../../platform/http/route.ts';
import { jsonArrayChunks } from '../../../platform/http/streamed-json.ts';
import { instantQuery } from '../../../platform/http/schemas.ts';
import type { HttpServer } from '../../../platform/http/server.ts';
import { tenantOf } from '../../../platform/http/tenant-resolution.ts';
import { checkResultSchema, consistencyToken, expandTreeSchema, fgaGuard, listObjectsSchema, queryFields, queryObjectId } from '../http-schemas.ts';
import { answerBody } from './answer-body.ts';
import type { AuthorizationAsOf } from './as-of.ts';
import type { AuthorizationQueries } from './authorization.ts';

const asOf = instantQuery
  .optional()
  .describe(
    'ISO 8601 instant with Z or an offset (needs view:audit too): the answer as the active model and the tuples stood then, ' +
      'from the log; not in the future nor before the tenant existed. consistencyToken does not apply.',
  );
const asOfOut = z.string().optional().describe('the instant answered for, when asOf was given');

const checkBody = z.strictObject({
  ...queryFields,
  objectId: queryObjectId,
  explain: z.boolean().default(false).describe('also return the resolution tree'),
  asOf,
});
const expandBody = z.strictObject({ objectType: queryFields.objectType, objectId: queryObjectId, relation: queryFields.relation, consistencyToken });
const listObjectsBody = z.strictObject({ ...queryFields, asOf });

interface QueryBody {
  consistencyToken?: bigint | undefined;
  asOf?: Date | undefined;
}
type Request<Body> = Omit<Body, 'consistencyToken' | 'asOf'>;
/** May answer without a promise (a check whose model and index are in memory). */
type Answer<Body, Result> = (tenant: string, request: Request<Body>, atLeast: bigint | undefined) => Result | Promise<Result>;
type PastAnswer<Body, Result> = (tenant: string, request: Request<Body>, at: Date) => Promise<Result>;

const QUERY_ERRORS = ['NO_ACTIVE_MODEL', 'INVALID_TYPE', 'INVALID_RELATION', 'MAX_DEPTH_EXCEEDED', 'CONSISTENCY_TIMEOUT'];

/** Authorization as it stood is compliance data: decisions.md asks view:audit beside debug:fga. */
function requireAuditView(request: FastifyRequest): void {
  if (!grants(principalOf(request).permissions, 'view:audit')) throw platformError('PERMISSION_DENIED', 'Permission view:audit is required for asOf');
}

/**
 * The envelope of an answer; a frozen answer's (a check's two bare answers) is made once and frozen
 * too, so that the answer's serializer checks and writes it once (src/platform/http/zod-compilers.ts).
 */
const frozenEnvelopes = new WeakMap<object, object>();
function envelopeOf(answer: object): object {
  if (!Object.isFrozen(answer)) return ok(answer);
  let envelope = frozenEnvelopes.get(answer);
  if (!envelope) frozenEnvelopes.set(answer, (envelope = Object.freeze(ok(answer))));
  return envelope;
}

/** The spec's Authorization queries (all debug:fga), answered from the in-memory index, or with asOf from the tuple history. */
export function registerAuthorizationRoutes(app: HttpServer, queries: AuthorizationQueries, past: AuthorizationAsOf): void {
  function query<Body extends QueryBody, Result extends object>(
    url: string,
    summary: string,
    body: ZodType<Body>,
    result: ZodType<Result>,
    answer: Answer<Body, Result>,
    pastAnswer?: PastAnswer<Body, Result>,
    /** The answer as NDJSON lines instead, when the client accepts them; `json` writes the JSON answer as a stream too. */
    stream?: { schema: ZodType; send: (result: Result, reply: FastifyReply) => FastifyReply; json: (answer: Result, reply: FastifyReply) => FastifyReply },
  ) {
    const respond = (request: FastifyRequest, reply: FastifyReply, found: Result, at: Date | undefined) => {
      if (stream && wantsNdjson(request.headers.accept)) return stream.send(found, reply);
      const answered = at ? { ...found, asOf: at.toISOString() } : found;
      return (stream ? stream.json(answered, reply) : envelopeOf(answered)) as never;
    };
    route(app, {
      ...fgaGuard('debug:fga'),
      method: 'POST',
      url,
      summary,
      readOnly: true,
      body,
      responses: { 200: okBody(pastAnswer ? (result as unknown as z.ZodObject).extend({ asOf: asOfOut }) : result) },
      ...(stream ? { alternatives: { [NDJSON]: stream.schema } } : {}),
      errors: QUERY_ERRORS,
      handler: (request, reply) => {
        // The body itself is the request (the engine reads only the fields it knows): an object
        // rest copy of it cost as much as the handler's own work.
        const body = request.body as Body;
        const { consistencyToken: atLeast, asOf: at } = body;
        const tenant = tenantOf(request).name;
        if (at && pastAnswer) {
          requireAuditView(request);
          return pastAnswer(tenant, body, at).then((found) => respond(request, reply, found, at));
        }
        // Without a promise when the answer is (a check from memory): no tick before the reply.
        // Arrows inline, no named closure per request (the tsx loader wraps each in __name()).
        const found = answer(tenant, body, atLeast);
        return found instanceof Promise ? found.then((settled) => respond(request, reply, settled, undefined)) : respond(request, reply, found, undefined);
      },
    });
  }

  // A very large answer is written a chunk of ids at a time, never as one string, and the JSON one
  // is not copied by the response schema's parse either (docs/decisions.md); a smaller one is
  // written whole, so the socket, not the heap, keeps what a slow client has not read yet.
  const chunked = (reply: FastifyReply, type: string, chunks: Generator<string>, ids: number) => reply.type(type).send(answerBody(chunks, ids));
  const objectIdLines = {
    schema: z.object({ objectId: z.string() }).describe('one object id per line, sorted; as many lines as `total` in the JSON answer'),
    send: ({ objectIds }: { objectIds: string[] }, reply: FastifyReply) => chunked(reply, NDJSON, ndjsonChunks(objectIds, (objectId) => ({ objectId })), objectIds.length),
    // {"ok":true,"data":{"objectIds":[...],"total":n(,"asOf":...)}}: the envelope ok() builds, in the schema's key order.
    json: ({ objectIds, ...rest }: { objectIds: string[]; total: number }, reply: FastifyReply) =>
      chunked(reply, 'application/json; charset=utf-8', jsonArrayChunks('{"ok":true,"data":{"objectIds":', objectIds, `,${JSON.stringify(rest).slice(1)}}`), objectIds.length),
  };

  query('/api/fga/check', 'Does the subject have the relation with the object? With explain, how it was resolved; with asOf, as it stood then', checkBody, checkResultSchema, queries.check, past.check);
  query('/api/fga/expand', 'The users of object#relation, one rewrite level deep (usersets are expanded by further calls)', expandBody, expandTreeSchema, queries.expand);
  query(
    '/api/fga/list-objects',
    'Ids (without the type) of every object of objectType the subject has the relation with; with asOf, as it stood then; ' +
      'with Accept: application/x-ndjson, one line per id, streamed',
    listObjectsBody,
    listObjectsSchema,
    queries.listObjects,
    past.listObjects,
    objectIdLines,
  );
}
