// The authorization core's public surface: DSL and type system, tuples, and the engine over a
// TupleReader port. Everything else in this folder is internal to it.
export { parseDsl } from './dsl/parser.ts';
export { AuthorizationEngine } from './engine/authorization-engine.ts';
export type { CheckRequest, CheckResult, ExpandRequest, ListObjectsRequest } from './engine/authorization-engine.ts';
export { DEFAULT_MAX_DEPTH } from './engine/check.ts';
export { withContextualTuples } from './engine/contextual-reader.ts';
export type { ExpandNode } from './engine/expand.ts';
export { MemoryTupleStore } from './engine/memory-tuple-store.ts';
export type { ResolutionNode } from './engine/resolution.ts';
export type { MaybePromise, ObjectIdsQuery, SubjectIdsQuery, TupleReader } from './engine/tuple-reader.ts';
export { DslUnsupportedError, FgaError, isFgaError } from './errors.ts';
export type { FgaErrorCode } from './errors.ts';
export { compileModel } from './model.ts';
export type { CompiledModel } from './model.ts';
export type { AuthorizationSchema, RelationReference, RewriteNode, TypeDefinition } from './schema.ts';
export type { RelationTuple, Subject } from './tuple.ts';
export { parseSubject, parseTuple, subjectFieldsToString, subjectOf, subjectToString, tupleToString } from './tuple.ts';
export { validateTuple } from './tuple-validation.ts';
export { RelationDefinition, TypeSystem } from './typesystem.ts';
export { errorStatuses } from './app-errors.ts';
export { fgaModelEvents } from './models/events.ts';
export type { FgaModelActivated, FgaModelCreated, FgaModelDeleted, FgaModelEvent, FgaModelUpdated } from './models/events.ts';
export { fgaModule, registerFgaRoutes } from './module.ts';
export { FGA_PROJECTION } from './models/queries.ts';
export { FGA_HISTORY_PROJECTION } from './serving/tuple-history.ts';
export { FGA_TUPLE_EVENT_TYPES, TUPLE_TYPES_ANSWERED_FROM_INDEX, fgaTupleEvents, tupleListsOf } from './tuples/events.ts';
export type { FgaTupleDeleted, FgaTupleEvent, FgaTupleWritten, FgaTuplesChanged } from './tuples/events.ts';
