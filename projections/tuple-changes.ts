import { tupleListsOf, type RelationTuple } from '../src/modules/fga/index.ts';
import type { RecordedEvent } from '../src/platform/eventstore/port.ts';

/** The changes of one kind an event makes in a run: its tuples as the event records them. */
export interface EventTupleChanges {
  event: RecordedEvent;
  /** The place of the first of these tuples among the event's changes (writes first, then deletes). */
  firstPart: number;
  tuples: readonly RelationTuple[];
}

/** A run of consecutive changes of one kind, in log order. */
export interface TupleChangeRun {
  written: boolean;
  changes: EventTupleChanges[];
}

/**
 * The tuple changes of tuple events (one-tuple events and FgaTuplesChanged alike) cut into runs of
 * writes and of deletes: applying each run with one set-based statement, run after run, equals
 * applying the changes one by one (a run never holds one tuple twice: a tuple is written only
 * while absent and deleted only while it stands).
 */
export function tupleChangeRuns(events: RecordedEvent[]): TupleChangeRun[] {
  const runs: TupleChangeRun[] = [];
  const add = (written: boolean, changes: EventTupleChanges) => {
    if (changes.tuples.length === 0) return;
    const last = runs.at(-1);
    if (last?.written === written) last.changes.push(changes);
    else runs.push({ written, changes: [changes] });
  };
  for (const event of events) {
    const { writes, deletes } = tupleListsOf(event);
    add(true, { event, firstPart: 0, tuples: writes });
    add(false, { event, firstPart: writes.length, tuples: deletes });
  }
  return runs;
}

/**
 * A run as one JSON parameter for TUPLE_CHANGE_ROWS: one record per event, its tuples as the event
 * holds them (JSON.stringify is native; one object per tuple built here cost as much again).
 */
export function runJson(run: TupleChangeRun): string {
  return JSON.stringify(
    run.changes.map(({ event, firstPart, tuples }) => ({
      tenant: event.metadata.tenantId,
      position: event.position.toString(),
      at: event.metadata.occurredAt,
      first: firstPart,
      tuples,
    })),
  );
}

/**
 * The rows of a run's JSON ($1, see runJson), one per tuple change: the tuple's columns as the read
 * models name them, `position` and `part` (the change's place among its event's changes) and `at`
 * (occurredAt). Each event's times and position are parsed once, not once per tuple.
 */
export const TUPLE_CHANGE_ROWS = `(
  select k.* from json_to_recordset($1::json) as e(tenant text, position bigint, at timestamptz, first integer, tuples json)
   cross join lateral (
     select e.tenant as tenant_id, t."objectType" as object_type, t."objectId" as object_id, t.relation, t."subjectType" as subject_type,
            t."subjectId" as subject_id, coalesce(t."subjectRelation", '') as subject_relation, e.position, e.first + t.n::integer - 1 as part, e.at
       from rows from (json_to_recordset(e.tuples) as ("objectType" text, "objectId" text, relation text, "subjectType" text, "subjectId" text, "subjectRelation" text))
            with ordinality as t("objectType", "objectId", relation, "subjectType", "subjectId", "subjectRelation", n)
     -- Not flattened: a join on the whole key then binds the tenant too (flattened, the tenant was left to a join filter).
     offset 0
   ) k
)`;

/** The join of a tuple read model `t` with the change rows `k` on the whole tuple key. */
export const SAME_TUPLE =
  't.tenant_id = k.tenant_id and t.object_type = k.object_type and t.object_id = k.object_id and t.relation = k.relation ' +
  'and t.subject_type = k.subject_type and t.subject_id = k.subject_id and t.subject_relation = k.subject_relation';
