import { FGA_HISTORY_PROJECTION, FGA_TUPLE_EVENT_TYPES } from '../src/modules/fga/index.ts';
import type { PoolClient } from '../src/platform/db/pool.ts';
import { defineProjection, type ProjectionBatchHandler } from '../src/platform/projections/projection.ts';
import { KEY_TYPES, keyColumns, tupleChangeRuns, type TupleChangeRow } from './tuple-changes.ts';

const openLifetimes = (rows: TupleChangeRow[], tx: PoolClient) =>
  tx.query(
    `insert into fga_tuple_history
       (tenant_id, object_type, object_id, relation, subject_type, subject_id, subject_relation, written_position, written_part, written_at)
     select * from unnest(${KEY_TYPES}, $8::bigint[], $9::integer[], $10::timestamptz[])
     on conflict do nothing`,
    [...keyColumns(rows), rows.map((row) => row.position.toString()), rows.map((row) => row.part), rows.map((row) => row.occurredAt)],
  );

// A tuple is deleted only while it stands (the decider sees to it): the deletion ends its open lifetime.
const closeLifetimes = (rows: TupleChangeRow[], tx: PoolClient) =>
  tx.query(
    `update fga_tuple_history h set deleted_at = k.deleted_at
       from unnest(${KEY_TYPES}, $8::timestamptz[])
            as k(tenant_id, object_type, object_id, relation, subject_type, subject_id, subject_relation, deleted_at)
      where h.tenant_id = k.tenant_id and h.object_type = k.object_type and h.object_id = k.object_id and h.relation = k.relation
        and h.subject_type = k.subject_type and h.subject_id = k.subject_id and h.subject_relation = k.subject_relation
        and h.deleted_at is null`,
    [...keyColumns(rows), rows.map((row) => row.occurredAt)],
  );

const applyTupleChanges: ProjectionBatchHandler = async (events, tx) => {
  for (const run of tupleChangeRuns(events)) await (run.written ? openLifetimes(run.rows, tx) : closeLifetimes(run.rows, tx));
};

/**
 * Read model `fga_tuple_history` (migrations 0019, 0025): each tuple's lifetimes, so check and
 * list-objects can answer as the tuples stood at any instant. Times are the events' occurredAt.
 */
export const fgaHistoryProjection = defineProjection({
  name: FGA_HISTORY_PROJECTION,
  tables: ['fga_tuple_history'],
  handlers: {},
  batchHandlers: Object.fromEntries(FGA_TUPLE_EVENT_TYPES.map((type) => [type, applyTupleChanges])),
});
