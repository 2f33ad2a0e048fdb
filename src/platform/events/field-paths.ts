/**
 * Field paths name a place in an event's data: `email`, `roles[].name` (every element of an
 * array), `relations.*.type` (every value of a record). Sensitive and personal declarations use
 * them; redaction applies them to values and to the JSON Schema of the data.
 */
export type JsonSchema = Record<string, unknown>;

const ARRAY_ITEMS = '[]';
const RECORD_VALUES = '*';

const segmentsOfPath = new Map<string, readonly string[]>();

/** Parsed once per distinct path: the catalogue's paths are few and every event read applies them. */
export function pathSegments(path: string): readonly string[] {
  let segments = segmentsOfPath.get(path);
  if (!segments) {
    segments = path.split('.').flatMap((part) => (part.endsWith(ARRAY_ITEMS) ? [part.slice(0, -ARRAY_ITEMS.length), ARRAY_ITEMS] : [part]));
    segmentsOfPath.set(path, segments);
  }
  return segments;
}

function joinPath(prefix: string, segment: string): string {
  if (segment === ARRAY_ITEMS) return `${prefix}${ARRAY_ITEMS}`;
  return prefix ? `${prefix}.${segment}` : segment;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The alternatives of a node (anyOf / oneOf / allOf): a nullable or a union is walked through each. */
function branches(node: JsonSchema): JsonSchema[] {
  return ['anyOf', 'oneOf', 'allOf'].flatMap((key) => (Array.isArray(node[key]) ? (node[key] as JsonSchema[]) : []));
}

export interface SchemaField {
  path: string;
  /** The field's schema; an anyOf of them when several branches of a union declare it differently. */
  schema: JsonSchema;
  /** Present whenever its parent is (in at least one branch). */
  required: boolean;
}

/** Every named field of a JSON Schema, depth first; recursive references ($ref) are not followed. */
export function schemaFields(root: JsonSchema): SchemaField[] {
  const fields = new Map<string, { schemas: Map<string, JsonSchema>; required: boolean }>();
  const visit = (node: JsonSchema, prefix: string): void => {
    for (const branch of branches(node)) visit(branch, prefix);
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
    for (const [name, child] of Object.entries(isObject(node.properties) ? node.properties : {})) {
      const path = joinPath(prefix, name);
      const field = fields.get(path) ?? { schemas: new Map(), required: false };
      field.schemas.set(JSON.stringify(child), child as JsonSchema);
      field.required ||= required.has(name);
      fields.set(path, field);
      visit(child as JsonSchema, path);
    }
    if (isObject(node.items)) visit(node.items, joinPath(prefix, ARRAY_ITEMS));
    if (isObject(node.additionalProperties)) visit(node.additionalProperties, joinPath(prefix, RECORD_VALUES));
  };
  visit(root, '');
  return [...fields].map(([path, { schemas, required }]) => {
    const variants = [...schemas.values()];
    return { path, schema: variants.length === 1 ? variants[0]! : { anyOf: variants }, required };
  });
}

const OMIT = Symbol('omit');
type Rewrite = (field: unknown) => unknown;

/*
 * The rewrites below copy on write: `value` is never modified, the objects and arrays on the way to
 * a rewritten field are new, and everything else is shared with `value` (returned as is when no
 * path names a field it holds). Read events are never mutated, and a deep copy of every event's
 * data cost the history feed more than anything else it did per event.
 */

/** `value` without the fields at `paths`. */
export const omitValuePaths = (value: unknown, paths: readonly string[]): unknown => rewriteValuePaths(value, paths, () => OMIT);

/** `value` whose fields at `paths` that hold something read `mask` instead. */
export const maskValuePaths = (value: unknown, paths: readonly string[], mask: string): unknown => mapValuePaths(value, paths, () => mask);

/** `value` whose fields at `paths` that hold something are replaced by `rewrite(field)`. */
export const mapValuePaths = (value: unknown, paths: readonly string[], rewrite: (field: unknown) => unknown): unknown =>
  rewriteValuePaths(value, paths, (field) => (field === null || field === undefined ? field : rewrite(field)));

function rewriteValuePaths(value: unknown, paths: readonly string[], rewrite: Rewrite): unknown {
  return paths.reduce((current, path) => rewriteSegments(current, pathSegments(path), rewrite), value);
}

/** `items` when no element changed (copy on write), else the rewritten array. */
function sameOr<T>(items: T[], rewritten: T[]): T[] {
  return rewritten.every((item, i) => item === items[i]) ? items : rewritten;
}

function rewriteSegments(value: unknown, [segment, ...rest]: readonly string[], rewrite: Rewrite): unknown {
  if (segment === undefined) return value;
  if (segment === ARRAY_ITEMS) return Array.isArray(value) ? sameOr(value, value.map((item) => rewriteSegments(item, rest, rewrite))) : value;
  if (!isObject(value)) return value;
  if (segment === RECORD_VALUES) {
    const entries = Object.entries(value);
    const rewritten = entries.map(([key, item]) => [key, rewriteSegments(item, rest, rewrite)] as const);
    return rewritten.every(([, item], i) => item === entries[i]![1]) ? value : Object.fromEntries(rewritten);
  }
  if (!(segment in value)) return value;
  const field = value[segment];
  const replacement = rest.length > 0 ? rewriteSegments(field, rest, rewrite) : rewrite(field);
  if (replacement === field) return value;
  if (replacement !== OMIT) return { ...value, [segment]: replacement };
  const { [segment]: _omitted, ...kept } = value;
  return kept;
}

/** A deep copy of a JSON Schema without the fields at `paths` (in every branch that declares them). */
export function omitSchemaPaths(schema: JsonSchema, paths: readonly string[]): JsonSchema {
  return paths.reduce((current, path) => omitSchemaSegments(current, pathSegments(path)), structuredClone(schema));
}

function omitSchemaSegments(node: JsonSchema, segments: readonly string[]): JsonSchema {
  const [segment, ...rest] = segments;
  if (segment === undefined) return node;
  const result: JsonSchema = { ...node };
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    if (Array.isArray(node[key])) result[key] = (node[key] as JsonSchema[]).map((branch) => omitSchemaSegments(branch, segments));
  }
  if (segment === ARRAY_ITEMS) {
    if (isObject(node.items)) result.items = omitSchemaSegments(node.items, rest);
    return result;
  }
  if (segment === RECORD_VALUES) {
    if (isObject(node.additionalProperties)) result.additionalProperties = omitSchemaSegments(node.additionalProperties, rest);
    return result;
  }
  if (!isObject(node.properties) || !(segment in node.properties)) return result;
  if (rest.length === 0) {
    const { [segment]: _omitted, ...kept } = node.properties;
    result.properties = kept;
    if (Array.isArray(node.required)) result.required = (node.required as string[]).filter((name) => name !== segment);
  } else {
    result.properties = { ...node.properties, [segment]: omitSchemaSegments(node.properties[segment] as JsonSchema, rest) };
  }
  return result;
}
