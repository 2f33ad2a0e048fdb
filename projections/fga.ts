import type { FgaModelActivated, FgaModelCreated, FgaModelDeleted, FgaModelUpdated } from '../src/modules/fga/models/events.ts';
import { FGA_PROJECTION } from '../src/modules/fga/serving/tuple-snapshot.ts';
import type { FgaTupleDeleted, FgaTupleWritten } from '../src/modules/fga/tuples/events.ts';
import type { RelationTuple } from '../src/modules/fga/tuple.ts';
import { defineProjection } from '../src/platform/projections/projection.ts';

const tupleKey = (tenant: string, t: RelationTuple) => [tenant, t.objectType, t.objectId, t.relation, t.subjectType, t.subjectId, t.subjectRelation ?? ''];

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
    FgaTupleWritten: async (event, tx) => {
      const { tuple } = event.data as FgaTupleWritten['data'];
      await tx.query(
        `insert into fga_tuples (tenant_id, object_type, object_id, relation, subject_type, subject_id, subject_relation, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8) on conflict do nothing`,
        [...tupleKey(event.metadata.tenantId, tuple), event.metadata.occurredAt],
      );
    },
    FgaTupleDeleted: async (event, tx) => {
      const { tuple } = event.data as FgaTupleDeleted['data'];
      await tx.query(
        `delete from fga_tuples where tenant_id = $1 and object_type = $2 and object_id = $3 and relation = $4
            and subject_type = $5 and subject_id = $6 and subject_relation = $7`,
        tupleKey(event.metadata.tenantId, tuple),
      );
    },
  },
});
