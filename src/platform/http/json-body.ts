import { errorCodes, type FastifyBodyParser } from 'fastify';

/**
 * Whether fastify's JSON parser (secure-json-parse) could refuse or change anything in this text:
 * its two patterns match only a quoted `__proto__` or `constructor` key, each letter as itself or
 * as a \u escape, and it drops a leading byte-order mark. An empty body is its error too.
 */
const needsFastifyParser = (text: string) =>
  text.length === 0 || text.charCodeAt(0) === 0xfeff || text.indexOf('\\') !== -1 || text.indexOf('__proto__') !== -1 || text.indexOf('constructor') !== -1;

/**
 * The JSON body parser: text without a backslash, a BOM or either of those two words gets exactly
 * the answer of fastify's parser from a plain JSON.parse (its regular expressions and checks cost
 * as much again: every check and every JSON write passes here); any other text goes to fastify's
 * parser itself, poisoning refused. The body's size and Content-Length are checked by fastify
 * before either runs (parseAs 'string'). An empty body on a route that takes none (a DELETE, a
 * `/test`) is no body, as clients that send `Content-Type: application/json` on every request
 * expect; on a route that takes one it is still fastify's "Empty JSON body".
 */
export function jsonBodyParser(fastifyParser: FastifyBodyParser<string>): FastifyBodyParser<string> {
  return (request, body, done) => {
    if (body.length === 0 && request.routeOptions.schema?.body === undefined) return done(null, undefined);
    if (needsFastifyParser(body)) return fastifyParser(request, body, done);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
      return;
    }
    done(null, parsed);
  };
}
