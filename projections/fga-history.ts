import { FGA_HISTORY_PROJECTION, FGA_TUPLE_EVENT_TYPES } from '../src/modules/fga/index.ts';
import type { PoolClient } from '../src/platform/db/pool.ts';
import { defineProjection, type ProjectionBatchHandler } from '../src/platform/projections/projection.ts';
import { runJson, SAME_TUPLE, TUPLE_CHANGE_ROWS, tupleChangeRuns, type TupleChangeRun } from './tuple-changes.ts';

// A lifetime is written once: the projection applies each event once (its checkpoint moves in the
// same transaction), so the insert needs no ON CONFLICT (a speculative insertion per row cost ~10%).
const openLifetimes = (run: TupleChangeRun, tx: PoolClient) =>
  tx.query(
    `insert into fga_tuple_history
       (tenant_id, object_type, object_id, relation, subject_type, subject_id, subject_relation, written_position, written_part, written_at)
     select k.tenant_id, k.object_type, k.object_id, k.relation, k.subject_type, k.subject_id, k.subject_relation, k.position, k.part, k.at
       from ${TUPLE_CHANGE_ROWS} k`,
    [runJson(run)],
  );

// A tuple is deleted only while it stands (the decider sees to it): the deletion ends its open lifetime.
const closeLifetimes = (run: TupleChangeRun, tx: PoolClient) =>
  tx.query(
    `update fga_tuple_history t set deleted_at = k.at
       from ${TUPLE_CHANGE_ROWS} k
      where ${SAME_TUPLE} and t.deleted_at is null`,
    [runJson(run)],
  );

const applyTupleChanges: ProjectionBatchHandler = async (events, tx) => {
  for (const run of tupleChangeRuns(events)) await (run.written ? openLifetimes(run, tx) : closeLifetimes(run, tx));
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
