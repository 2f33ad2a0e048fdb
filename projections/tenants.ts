import type { TenantCreated, TenantDeleted, TenantUpdated } from '../src/modules/tenants/index.ts';
import { defineProjection } from '../src/platform/projections/projection.ts';

/** Read model `tenants` (migration 0003). Deleted tenants stay as rows with deleted_at set. */
export const tenantsProjection = defineProjection({
  name: 'tenants',
  tables: ['tenants'],
  handlers: {
    TenantCreated: async (event, tx) => {
      const { tenantId, name, displayName } = event.data as TenantCreated['data'];
      await tx.query(
        `insert into tenants (id, name, display_name, created_at, updated_at) values ($1, $2, $3, $4, $4)
         on conflict (id) do nothing`,
        [tenantId, name, displayName, event.metadata.occurredAt],
      );
    },
    TenantUpdated: async (event, tx) => {
      const { tenantId, displayName } = event.data as TenantUpdated['data'];
      await tx.query('update tenants set display_name = $2, updated_at = $3 where id = $1', [
        tenantId,
        displayName,
        event.metadata.occurredAt,
      ]);
    },
    TenantDeleted: async (event, tx) => {
      const { tenantId } = event.data as TenantDeleted['data'];
      await tx.query('update tenants set deleted_at = $2, updated_at = $2 where id = $1', [tenantId, event.metadata.occurredAt]);
    },
  },
});
