import { z } from 'zod';
import { defineEvent, type EventOf } from '../../../platform/events/define-event.ts';
import type { RelationTuple } from '../tuple.ts';
import { tupleToString } from '../tuple.ts';

/** The fields of a relation tuple as events record them and the API answers them. */
export const relationTupleFields = {
  objectType: z.string(),
  objectId: z.string(),
  relation: z.string(),
  subjectType: z.string(),
  subjectId: z.string(),
  subjectRelation: z.string().optional(),
};
const relationTuple: z.ZodType<RelationTuple> = z.strictObject(relationTupleFields);

/** One tuple per event, in the tuple's own stream: what the service recorded before FgaTuplesChanged (replayed, never appended now). */
export const fgaTupleWritten = defineEvent({
  type: 'FgaTupleWritten',
  description: 'Recorded before FgaTuplesChanged; modelId: the active model the tuple was validated against when written.',
  data: z.strictObject({ tuple: relationTuple, modelId: z.string() }),
});
export const fgaTupleDeleted = defineEvent({
  type: 'FgaTupleDeleted',
  description: 'Recorded before FgaTuplesChanged.',
  data: z.strictObject({ tuple: relationTuple }),
});
/** Every tuple change of one request (a single write or delete, or a bulk request), in the tenant's tuple stream. */
export const fgaTuplesChanged = defineEvent({
  type: 'FgaTuplesChanged',
  description:
    'The tuples one request wrote and deleted (no tuple twice; deletes only of tuples that existed). modelId: the active model the writes were validated against (absent when nothing was written).',
  data: z.strictObject({ modelId: z.string().optional(), writes: z.array(relationTuple), deletes: z.array(relationTuple) }),
});

/**
 * A tuple write answers once this instance's index has it (what check, expand and list-objects
 * read), not the read models: fga_tuples, the history and the audit log follow, and a later query
 * of one of them through this instance waits for them first (read-your-writes' deferred types).
 */
export const TUPLE_TYPES_ANSWERED_FROM_INDEX = [fgaTuplesChanged.type];

export const fgaTupleEvents = [fgaTupleWritten, fgaTupleDeleted, fgaTuplesChanged];
export const FGA_TUPLE_EVENT_TYPES = fgaTupleEvents.map((definition) => definition.type);
const tupleEventTypes: ReadonlySet<string> = new Set(FGA_TUPLE_EVENT_TYPES);
export const isTupleEventType = (type: string): boolean => tupleEventTypes.has(type);

export type FgaTupleWritten = EventOf<typeof fgaTupleWritten>;
export type FgaTupleDeleted = EventOf<typeof fgaTupleDeleted>;
export type FgaTuplesChanged = EventOf<typeof fgaTuplesChanged>;
export type FgaTupleEvent = EventOf<(typeof fgaTupleEvents)[number]>;

/** One tuple's change: written (true) or deleted (false). */
export interface TupleChange {
  tuple: RelationTuple;
  written: boolean;
}

/** The tuples an event writes and deletes, as it records them (no copy: a bulk event holds 100 or more). */
export function tupleListsOf(event: { type: string; data: unknown }): { writes: readonly RelationTuple[]; deletes: readonly RelationTuple[] } {
  const { type, data } = event as FgaTupleEvent;
  switch (type) {
    case 'FgaTupleWritten':
      return { writes: [data.tuple], deletes: [] };
    case 'FgaTupleDeleted':
      return { writes: [], deletes: [data.tuple] };
    case 'FgaTuplesChanged':
      return data;
    default: {
      const exhaustive: never = type;
      return exhaustive;
    }
  }
}

/** The tuple changes an event records, in the order they apply (a request's writes, then its deletes). */
export function tupleChangesOf(event: { type: string; data: unknown }): TupleChange[] {
  const { writes, deletes } = tupleListsOf(event);
  return [...writes.map((tuple) => ({ tuple, written: true })), ...deletes.map((tuple) => ({ tuple, written: false }))];
}

/**
 * Every tuple change of a tenant goes to one stream: "this tuple exists" is decided against the
 * tenant's tuples as of the stream's revision, so of two racing writes of one tuple only one
 * succeeds, and a bulk request is one event however many tuples it holds. (Tuples written
 * before it live in their own streams, `fgatuple-<tenant>.<tuple>`, and are replayed as they are.)
 */
export const tenantTuplesStreamId = (tenant: string): string => `fgatuples-${tenant}`;

/** The stream of one tuple's FgaTupleWritten/FgaTupleDeleted events, recorded before FgaTuplesChanged. */
export const legacyTupleStreamId = (tenant: string, tuple: RelationTuple): string => `fgatuple-${tenant}.${tupleToString(tuple)}`;
