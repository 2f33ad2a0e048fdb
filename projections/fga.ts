import { FGA_PROJECTION, FGA_TUPLE_EVENT_TYPES, type FgaModelActivated, type FgaModelCreated, type FgaModelDeleted, type FgaModelUpdated } from '../src/modules/fga/index.ts';
import type { PoolClient } from '../src/platform/db/pool.ts';
import { defineProjection, type ProjectionBatchHandler } from '../src/platform/projections/projection.ts';
import { rowsJson, SAME_TUPLE, TUPLE_RECORD, tupleChangeRuns, type TupleChangeRow } from './tuple-changes.ts';

// In log order, so that of two writes of one tuple the first one's created_at stays.
const insertTuples = (rows: TupleChangeRow[], tx: PoolClient) =>
  tx.query(
    `insert into fga_tuples (tenant_id, object_type, object_id, relation, subject_type, subject_id, subject_relation, created_at)
     select k.tenant_id, k.object_type, k.object_id, k.relation, k.subject_type, k.subject_id, k.subject_relation, k.at
       from json_to_recordset($1::json) as k(${TUPLE_RECORD}, at timestamptz, n integer)
      order by k.n
     on conflict do nothing`,
    [rowsJson(rows)],
  );

const deleteTuples = (rows: TupleChangeRow[], tx: PoolClient) =>
  tx.query(`delete from fga_tuples t using json_to_recordset($1::json) as k(${TUPLE_RECORD}) where ${SAME_TUPLE}`, [rowsJson(rows)]);

/** Bulk writes record up to 200 changes an event, and come in runs: one statement per run of writes or deletes. */
const applyTupleChanges: ProjectionBatchHandler = async (events, tx) => {
  for (const run of tupleChangeRuns(events)) await (run.written ? insertTuples(run.rows, tx) : deleteTuples(run.rows, tx));
};

/**
 * Read models `fga_models` and `fga_tuples` (migration 0007). The in-memory tuple indexes load
 * from fga_tuples with this projection's checkpoint as the position the rows reflect.
 */
export const fgaProjection = defineProjection({
  name: FGA_PROJECTION,
  tables: ['fga_models', 'fga_tuples'],
  handlers: {
    FgaModelCreated: async (event, tx) => {
      const { modelId, name, version, dsl, schema } = event.data as FgaModelCreated['data'];
      await tx.query(
        `insert into fga_models (tenant_id, id, name, version, is_active, dsl, schema, created_at, updated_at)
         values ($1, $2, $3, $4, false, $5, $6, $7, $7) on conflict do nothing`,
        [event.metadata.tenantId, modelId, name, version, dsl, JSON.stringify(schema), event.metadata.occurredAt],
      );
    },
    FgaModelUpdated: async (event, tx) => {
      const { modelId, name, dsl, schema } = event.data as FgaModelUpdated['data'];
      await tx.query(
        `update fga_models set name = coalesce($3, name), dsl = coalesce($4, dsl), schema = coalesce($5, schema), updated_at = $6
          where tenant_id = $1 and id = $2`,
        [event.metadata.tenantId, modelId, name ?? null, dsl ?? null, schema ? JSON.stringify(schema) : null, event.metadata.occurredAt],
      );
    },
    FgaModelActivated: async (event, tx) => {
      const { modelId } = event.data as FgaModelActivated['data'];
      const params = [event.metadata.tenantId, modelId, event.metadata.occurredAt];
      // Two statements: the one-active-model index is checked row by row.
      await tx.query('update fga_models set is_active = false, updated_at = $3 where tenant_id = $1 and is_active and id <> $2', params);
      await tx.query('update fga_models set is_active = true, updated_at = $3 where tenant_id = $1 and id = $2', params);
    },
    FgaModelDeleted: async (event, tx) => {
      const { modelId } = event.data as FgaModelDeleted['data'];
      await tx.query('delete from fga_models where tenant_id = $1 and id = $2', [event.metadata.tenantId, modelId]);
    },
  },
  batchHandlers: Object.fromEntries(FGA_TUPLE_EVENT_TYPES.map((type) => [type, applyTupleChanges])),
});
