import type { RelationTuple } from '../tuple.ts';
import { andThen } from './maybe-async.ts';
import { MemoryTupleStore } from './memory-tuple-store.ts';
import type { TupleReader } from './tuple-reader.ts';

/**
 * Overlays a request's contextual tuples on the store: they count as written, for this request
 * only. Duplicates between both sides are harmless (check short-circuits, list-objects dedupes).
 */
export function withContextualTuples(
  reader: TupleReader,
  contextualTuples: readonly RelationTuple[] | undefined,
): TupleReader {
  if (!contextualTuples || contextualTuples.length === 0) return reader;
  const overlay = MemoryTupleStore.of(contextualTuples);
  return {
    readSubjectIds: (query) =>
      andThen(reader.readSubjectIds(query), (ids) => [...overlay.readSubjectIds(query), ...ids]),
    readObjectIds: (query) => andThen(reader.readObjectIds(query), (ids) => [...overlay.readObjectIds(query), ...ids]),
    hasTuple: (tuple) => overlay.hasTuple(tuple) || reader.hasTuple(tuple),
  };
}
