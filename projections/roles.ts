import type { RoleCreated, RoleDeleted, RoleUpdated } from '../src/modules/roles/index.ts';
import { defineProjection } from '../src/platform/projections/projection.ts';

/** Read model `roles` (migration 0003), keyed by (tenant_id, id). */
export const rolesProjection = defineProjection({
  name: 'roles',
  tables: ['roles'],
  handlers: {
    RoleCreated: async (event, tx) => {
      const { roleId, name, description, color, permissions } = event.data as RoleCreated['data'];
      await tx.query(
        `insert into roles (tenant_id, id, name, description, color, permissions, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $7) on conflict do nothing`,
        [event.metadata.tenantId, roleId, name, description, color, permissions, event.metadata.occurredAt],
      );
    },
    RoleUpdated: async (event, tx) => {
      const { roleId, name, description, color, permissions } = event.data as RoleUpdated['data'];
      await tx.query(
        `update roles set name = coalesce($3, name), description = coalesce($4, description), color = coalesce($5, color),
                permissions = coalesce($6, permissions), updated_at = $7
          where tenant_id = $1 and id = $2`,
        [event.metadata.tenantId, roleId, name ?? null, description ?? null, color ?? null, permissions ?? null, event.metadata.occurredAt],
      );
    },
    RoleDeleted: async (event, tx) => {
      const { roleId } = event.data as RoleDeleted['data'];
      await tx.query('delete from roles where tenant_id = $1 and id = $2', [event.metadata.tenantId, roleId]);
    },
  },
});
