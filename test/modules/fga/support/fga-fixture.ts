import type { CheckRequest, ListObjectsRequest } from '../../../../src/modules/fga/engine/authorization-engine.ts';
import { AuthorizationEngine } from '../../../../src/modules/fga/engine/authorization-engine.ts';
import { MemoryTupleStore } from '../../../../src/modules/fga/engine/memory-tuple-store.ts';
import type { TupleReader } from '../../../../src/modules/fga/engine/tuple-reader.ts';
import { compileModel } from '../../../../src/modules/fga/model.ts';
import { parseSubject, parseTuple } from '../../../../src/modules/fga/tuple.ts';
import { validateTuple } from '../../../../src/modules/fga/tuple-validation.ts';

/** An engine over a compiled model and an in-memory store holding the given tuples (text form, validated). */
export function engineFor(dsl: string, tuples: readonly string[] = [], options: { maxDepth?: number; asyncReader?: boolean } = {}) {
  const { schema, typesystem } = compileModel(dsl);
  const store = new MemoryTupleStore();
  for (const text of tuples) {
    const tuple = parseTuple(text);
    validateTuple(typesystem, tuple);
    store.add(tuple);
  }
  const reader = options.asyncReader ? asyncReader(store) : store;
  const engineOptions = options.maxDepth === undefined ? {} : { maxDepth: options.maxDepth };
  return { schema, typesystem, store, engine: new AuthorizationEngine(typesystem, reader, engineOptions) };
}

/** The same answers, always through promises, as a SQL-backed reader would give them. */
export function asyncReader(reader: TupleReader): TupleReader {
  return {
    readSubjectIds: async (query) => [...(await reader.readSubjectIds(query))],
    readObjectIds: async (query) => [...(await reader.readObjectIds(query))],
    hasTuple: async (tuple) => reader.hasTuple(tuple),
  };
}

/** Check request fields from `object#relation@subject` text. */
export function checkOf(text: string): CheckRequest {
  const { objectType, objectId, relation, subjectType, subjectId, subjectRelation } = parseTuple(text);
  return { objectType, objectId, relation, subjectType, subjectId, ...(subjectRelation ? { subjectRelation } : {}) };
}

/** List-objects request fields from `type#relation` and a subject text (`user:anne`, `group:eng#member`). */
export function listOf(typeRelation: string, subjectText: string): ListObjectsRequest {
  const [objectType = '', relation = ''] = typeRelation.split('#');
  const subject = parseSubject(subjectText);
  return {
    objectType,
    relation,
    subjectType: subject.type,
    subjectId: subject.id,
    ...(subject.relation ? { subjectRelation: subject.relation } : {}),
  };
}

/** A small model: documents with owners, and viewers that owners imply. */
export const DOCS = `model
  schema 1.1
type user
type document
  relations
    define owner: [user]
    define viewer: [user] or owner`;
