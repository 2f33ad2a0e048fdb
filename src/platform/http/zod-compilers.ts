import type { FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';
import { ResponseSerializationError, serializerCompiler as encodingSerializerCompiler, validatorCompiler as parsingValidatorCompiler } from 'fastify-type-provider-zod';
import { z, type ZodType } from 'zod';
import { $ZodType } from 'zod/v4/core';

/**
 * Each schema is compiled by zod (`z.compile`: generated code for the valid case, the runtime
 * parser for the rest, so answers and error messages are the runtime's) the first time a request
 * needs it, instead of being interpreted node by node at every request.
 */
const lazilyCompiled = (schema: ZodType): (() => ZodType) => {
  let compiled: ZodType | undefined;
  return () => (compiled ??= z.compile(schema));
};

/** Request parts (params, query, body): fastify-type-provider-zod's validator on the compiled schema. */
export const validatorCompiler: FastifySchemaCompiler<ZodType> = (route) => {
  const compiled = lazilyCompiled(route.schema);
  let validate: ReturnType<typeof parsingValidatorCompiler> | undefined;
  return (data) => (validate ??= parsingValidatorCompiler({ ...route, schema: compiled() }))(data);
};

/**
 * Kinds whose encode (the library's serializer: zod's backward direction) and parse (forward) give
 * the same answer: no codec, pipe, transform, default or catch in the tree. Anything else keeps the
 * library's encoding serializer.
 */
const DIRECTION_FREE = new Set([
  'string', 'number', 'int', 'boolean', 'bigint', 'null', 'undefined', 'literal', 'enum', 'unknown', 'any', 'template_literal',
  'object', 'array', 'optional', 'nullable', 'readonly', 'record', 'tuple', 'union', 'intersection', 'lazy',
]);

interface Def {
  type: string;
  [key: string]: unknown;
}
const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

/** Whether every node of the tree parses forward exactly as it encodes backward. */
function encodesAsItParses(schema: unknown, seen = new Set<unknown>()): boolean {
  if (seen.has(schema)) return true;
  seen.add(schema);
  const def = defOf(schema);
  if (!DIRECTION_FREE.has(def.type)) return false;
  // A discriminated union picks its option differently when encoding a value without the tag.
  if (def.type === 'union' && def.discriminator !== undefined) return false;
  const children: unknown[] = [];
  if (def.type === 'object') children.push(...Object.values(def.shape as object), ...(def.catchall ? [def.catchall] : []));
  if (def.type === 'lazy') children.push((schema as { _zod: { innerType: unknown } })._zod.innerType);
  for (const key of ['element', 'innerType', 'keyType', 'valueType', 'left', 'right', 'rest'] as const) if (def[key]) children.push(def[key]);
  for (const key of ['options', 'items'] as const) if (Array.isArray(def[key])) children.push(...(def[key] as unknown[]));
  return children.every((child) => encodesAsItParses(child, seen));
}

type SerializerRoute = Parameters<typeof encodingSerializerCompiler>[0];

/**
 * Answers: checked against the declared schema (unknown keys stripped, a value outside it is a 500)
 * and written with JSON.stringify, as fastify-type-provider-zod's serializer does, but through the
 * compiled forward parse where it gives the same answer as the library's encode.
 */
export const serializerCompiler: FastifySerializerCompiler<ZodType> = (route) => {
  const schema = schemaOf(route.schema);
  if (!schema || !encodesAsItParses(schema)) return encodingSerializerCompiler(route as SerializerRoute);
  const compiled = lazilyCompiled(schema);
  // An answer frozen throughout cannot change: it is checked and written once (a route's constant answers).
  const written = new WeakMap<object, string>();
  return (data) => {
    const known = Object.isFrozen(data) ? written.get(data as object) : undefined;
    if (known !== undefined) return known;
    const result = compiled().safeParse(data);
    if (!result.success) throw new ResponseSerializationError(route.method, route.url, { cause: result.error });
    const text = JSON.stringify(result.data);
    if (deeplyFrozen(data)) written.set(data as object, text);
    return text;
  };
};

/** Whether an object and every object it holds are frozen. */
function deeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return Object.isFrozen(value) && Object.values(value).every((member) => typeof member !== 'object' || member === null || deeplyFrozen(member));
}

/** The zod schema of an answer: the schema itself, or the `properties` a content-typed answer wraps it in. */
function schemaOf(declared: unknown): ZodType | undefined {
  if (declared instanceof $ZodType) return declared as ZodType;
  const properties = (declared as { properties?: unknown } | undefined)?.properties;
  return properties instanceof $ZodType ? (properties as ZodType) : undefined;
}
