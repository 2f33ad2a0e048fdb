import { tupleChangesOf, type RelationTuple } from '../src/modules/fga/index.ts';
import type { RecordedEvent } from '../src/platform/eventstore/port.ts';

/** One tuple change as the tuple read models store it. */
export interface TupleChangeRow {
  tenant: string;
  tuple: RelationTuple;
  occurredAt: string;
  position: bigint;
  /** The change's place among its event's changes. */
  part: number;
}

/** A run of consecutive changes of one kind, in log order. */
export interface TupleChangeRun {
  written: boolean;
  rows: TupleChangeRow[];
}

/**
 * The tuple changes of tuple events (one-tuple events and FgaTuplesChanged alike) cut into runs of
 * writes and of deletes: applying each run with one set-based statement, run after run, equals
 * applying the changes one by one (a run never holds one tuple twice: a tuple is written only
 * while absent and deleted only while it stands).
 */
export function tupleChangeRuns(events: RecordedEvent[]): TupleChangeRun[] {
  const runs: TupleChangeRun[] = [];
  for (const event of events) {
    tupleChangesOf(event).forEach(({ tuple, written }, part) => {
      const row = { tenant: event.metadata.tenantId, tuple, occurredAt: event.metadata.occurredAt, position: event.position, part };
      const last = runs.at(-1);
      if (last?.written === written) last.rows.push(row);
      else runs.push({ written, rows: [row] });
    });
  }
  return runs;
}

/**
 * A run's rows as one JSON parameter, for `json_to_recordset($1::json) as k(${TUPLE_RECORD}, ...)`
 * (one text array per column made pg escape every element in JavaScript; JSON.stringify is native).
 * Besides the tuple columns each record has `position`, `part` and `at` (occurredAt).
 */
export function rowsJson(rows: TupleChangeRow[]): string {
  return JSON.stringify(
    rows.map(({ tenant, tuple: t, position, part, occurredAt }) => ({
      tenant_id: tenant,
      object_type: t.objectType,
      object_id: t.objectId,
      relation: t.relation,
      subject_type: t.subjectType,
      subject_id: t.subjectId,
      subject_relation: t.subjectRelation ?? '',
      position: position.toString(),
      part,
      at: occurredAt,
    })),
  );
}

export const TUPLE_RECORD = 'tenant_id text, object_type text, object_id text, relation text, subject_type text, subject_id text, subject_relation text';

/** The join of a tuple read model `t` with the records `k` on the whole tuple key. */
export const SAME_TUPLE =
  't.tenant_id = k.tenant_id and t.object_type = k.object_type and t.object_id = k.object_id and t.relation = k.relation ' +
  'and t.subject_type = k.subject_type and t.subject_id = k.subject_id and t.subject_relation = k.subject_relation';
