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

const tupleKey = (row: TupleChangeRow) => {
  const t = row.tuple;
  return [row.tenant, t.objectType, t.objectId, t.relation, t.subjectType, t.subjectId, t.subjectRelation ?? ''];
};

/** The key columns of a run, one array per column (for unnest with KEY_TYPES). */
export function keyColumns(rows: TupleChangeRow[]): string[][] {
  const keys = rows.map(tupleKey);
  return keys[0]!.map((_, column) => keys.map((key) => key[column]!));
}

export const KEY_TYPES = '$1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]';
