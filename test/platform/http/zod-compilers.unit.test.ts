import { serializerCompiler as libraryEncoder } from 'fastify-type-provider-zod';
import { describe, expect, it } from 'vitest';
import { z, type ZodType } from 'zod';
import { serializerCompiler, validatorCompiler } from '../../../src/platform/http/zod-compilers.ts';

const route = (schema: ZodType) => ({ schema, method: 'GET', url: '/x', httpStatus: '200' });
const ours = (schema: ZodType) => serializerCompiler(route(schema));
const library = (schema: ZodType) => libraryEncoder(route(schema) as never);
const outcome = (serialize: (data: unknown) => string, data: unknown) => {
  try {
    return { json: serialize(data) };
  } catch (error) {
    return { error: (error as Error).constructor.name };
  }
};

/** Answers as fastify-type-provider-zod's encoding serializer writes them, through the compiled parse where that is the same. */
describe('response serializer', () => {
  const cases: [string, ZodType, unknown[]][] = [
    ['an object (unknown keys stripped)', z.object({ allowed: z.boolean(), note: z.string().optional() }), [{ allowed: true, secret: 'x' }, { allowed: 'yes' }, { allowed: false, note: 'n' }]],
    ['a loose object', z.looseObject({ openapi: z.string() }), [{ openapi: '3.1.0', paths: {} }, { paths: {} }]],
    ['nullable, arrays, enums, unions, records', z.object({ a: z.string().nullable(), b: z.array(z.enum(['x', 'y'])), c: z.union([z.number(), z.literal('n')]), d: z.record(z.string(), z.number()) }), [{ a: null, b: ['x'], c: 'n', d: { k: 1 } }, { a: 'a', b: ['z'], c: 1, d: {} }]],
    ['a default (encoded as given)', z.object({ explain: z.boolean().default(false) }), [{}, { explain: true }]],
    ['a codec', z.object({ at: z.codec(z.iso.datetime(), z.date(), { decode: (text) => new Date(text), encode: (date) => date.toISOString() }) }), [{ at: new Date(0) }]],
    ['a discriminated union', z.discriminatedUnion('kind', [z.object({ kind: z.literal('a'), a: z.number() }), z.object({ kind: z.literal('b') })]), [{ kind: 'a', a: 1, extra: 1 }, { kind: 'c' }]],
  ];

  it.each(cases)('%s: the same answer or the same refusal as the encoding serializer', (_name, schema, values) => {
    const [fast, reference] = [ours(schema), library(schema)];
    for (const value of values) expect(outcome(fast, value)).toEqual(outcome(reference, value));
  });

  it('never writes a key the schema does not declare, and refuses a value outside it', () => {
    const serialize = ours(z.object({ ok: z.literal(true), data: z.object({ sub: z.string() }) }));
    expect(serialize({ ok: true, data: { sub: 's', passwordHash: 'h' }, internal: 1 })).toBe('{"ok":true,"data":{"sub":"s"}}');
    expect(outcome(serialize, { ok: true, data: { sub: 1 } })).toEqual({ error: 'ResponseSerializationError' });
  });
});

describe('request validator', () => {
  it('parses with the compiled schema: transforms and defaults applied, refusals in the library error form', () => {
    const validate = validatorCompiler({ schema: z.strictObject({ limit: z.coerce.number().max(10).default(5), name: z.string().transform((text) => text.trim()) }), method: 'GET', url: '/x', httpPart: 'querystring' });
    expect(validate({ name: ' a ' })).toEqual({ value: { limit: 5, name: 'a' } });
    const refused = validate({ name: 'a', limit: '11', extra: 1 }) as { error: { instancePath: string; keyword: string }[] };
    expect(refused.error.map((issue) => issue.keyword).sort()).toEqual(['too_big', 'unrecognized_keys']);
  });
});
