import { FGA_HISTORY_PROJECTION, FGA_TUPLE_EVENT_TYPES } from '../src/modules/fga/index.ts';
import type { PoolClient } from '../src/platform/db/pool.ts';
import { defineProjection, type ProjectionBatchHandler } from '../src/platform/projections/projection.ts';
import { rowsJson, SAME_TUPLE, TUPLE_RECORD, tupleChangeRuns, type TupleChangeRow } from './tuple-changes.ts';

const openLifetimes = (rows: TupleChangeRow[], tx: PoolClient) =>
  tx.query(
    `insert into fga_tuple_history
       (tenant_id, object_type, object_id, relation, subject_type, subject_id, subject_relation, written_position, written_part, written_at)
     select k.tenant_id, k.object_type, k.object_id, k.relation, k.subject_type, k.subject_id, k.subject_relation, k.position, k.part, k.at
       from json_to_recordset($1::json) as k(${TUPLE_RECORD}, position bigint, part integer, at timestamptz)
     on conflict do nothing`,
    [rowsJson(rows)],
  );

// A tuple is deleted only while it stands (the decider sees to it): the deletion ends its open lifetime.
const closeLifetimes = (rows: TupleChangeRow[], tx: PoolClient) =>
  tx.query(
    `update fga_tuple_history t set deleted_at = k.at
       from json_to_recordset($1::json) as k(${TUPLE_RECORD}, at timestamptz)
      where ${SAME_TUPLE} and t.deleted_at is null`,
    [rowsJson(rows)],
  );

const applyTupleChanges: ProjectionBatchHandler = async (events, tx) => {
  for (const run of tupleChangeRuns(events)) await (run.written ? openLifetimes(run.rows, tx) : closeLifetimes(run.rows, tx));
};

/**
 * Read model `fga_tuple_history` (migrations 0019, 0026): each tuple's lifetimes, so check and
 * list-objects can answer as the tuples stood at any instant. Times are the events' occurredAt.
 */
export const fgaHistoryProjection = defineProjection({
  name: FGA_HISTORY_PROJECTION,
  tables: ['fga_tuple_history'],
  handlers: {},
  batchHandlers: Object.fromEntries(FGA_TUPLE_EVENT_TYPES.map((type) => [type, applyTupleChanges])),
});
