import Fastify, { type FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { jsonBodyParser } from '../../../src/platform/http/json-body.ts';

const fastifyParser = Fastify().getDefaultJsonParser('error', 'error');
const parser = jsonBodyParser(fastifyParser);
/** A request to a route that takes a body, and one to a route that takes none. */
const request = { routeOptions: { schema: { body: {} } } } as unknown as FastifyRequest;
const bodylessRequest = { routeOptions: { schema: {} } } as unknown as FastifyRequest;

/** What a parser answers: the value (with whether it is a plain object), or the error's code. */
function outcome(parse: typeof parser, body: string, to = request) {
  let answer: unknown;
  parse(to, body, (error, value) => {
    answer = error ? { error: (error as { code?: string }).code ?? error.message } : { value, plainObject: Object.getPrototypeOf(value ?? 0) === Object.prototype };
  });
  return answer;
}

describe('jsonBodyParser', () => {
  const bodies = [
    '',
    '{}',
    '{"objectType":"document","objectId":"doc-1","relation":"viewer","subjectType":"user","subjectId":"alice"}',
    '\ufeff{"a":1}',
    '{"__proto__":{"admin":true}}',
    '{"a":{"__proto__":{"admin":true}}}',
    '{"\\u005f_proto__":{"admin":true}}',
    '{"_\\u005fpr\\u006fto__" :{"admin":true}}',
    '{"constructor":{"prototype":{"admin":true}}}',
    '{"c\\u006fnstructor":{"prototype":{"admin":true}}}',
    '{"constructor":1}',
    '{"a":"__proto__","b":"constructor"}',
    '{"a":"line\\nbreak","b":"\\u0041"}',
    '{"a":',
    'not json',
    '[1,{"b":null}]',
    '"text"',
    'null',
    '12',
  ];

  it.each(bodies)('answers %j as fastify\'s own JSON parser does', (body) => {
    expect(outcome(parser, body)).toEqual(outcome(fastifyParser, body));
  });

  it('refuses poisoning, empty and malformed bodies with fastify\'s errors', () => {
    expect(outcome(parser, '{"\\u005f_proto__":{}}')).toEqual({ error: 'FST_ERR_CTP_INVALID_JSON_BODY' });
    expect(outcome(parser, '{"a":')).toEqual({ error: 'FST_ERR_CTP_INVALID_JSON_BODY' });
    expect(outcome(parser, '')).toEqual({ error: 'FST_ERR_CTP_EMPTY_JSON_BODY' });
  });

  it('takes an empty body as no body on a route that takes none, and only an empty one', () => {
    expect(outcome(parser, '', bodylessRequest)).toEqual({ value: undefined, plainObject: false });
    expect(outcome(parser, '{"a":', bodylessRequest)).toEqual({ error: 'FST_ERR_CTP_INVALID_JSON_BODY' });
    expect(outcome(parser, '{}', bodylessRequest)).toEqual({ value: {}, plainObject: true });
  });
});
