import { FGA_PROJECTION, type FgaModelActivated, type FgaModelCreated, type FgaModelDeleted, type FgaModelUpdated } from '../src/modules/fga/index.ts';
import { defineProjection } from '../src/platform/projections/projection.ts';

/**
 * Read model `fga_models` (migration 0007). The tuples are the fga-history projection's
 * (fga_tuples is a view of its open lifetimes, migration 0030).
 */
export const fgaProjection = defineProjection({
  name: FGA_PROJECTION,
  tables: ['fga_models'],
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
});
