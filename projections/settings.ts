import { settingsDecider, type NestedSettings, type SettingsEvent } from '../src/modules/settings/index.ts';
import type { TenantCreated } from '../src/modules/tenants/index.ts';
import { defineProjection } from '../src/platform/projections/projection.ts';

/**
 * Read model `realm_settings` (migration 0005): each tenant's changed settings (defaults apply to the
 * rest), and when they last changed: the tenant's creation until a first change.
 */
export const settingsProjection = defineProjection({
  name: 'settings',
  tables: ['realm_settings'],
  handlers: {
    TenantCreated: async (event, tx) => {
      const { name } = (event as unknown as TenantCreated).data;
      await tx.query(
        `insert into realm_settings (tenant_id, settings, updated_at) values ($1, '{}', $2) on conflict (tenant_id) do nothing`,
        [name, event.metadata.occurredAt],
      );
    },
    SecuritySettingsUpdated: async (event, tx) => {
      const tenant = event.metadata.tenantId;
      const { rows } = await tx.query<{ settings: NestedSettings }>('select settings from realm_settings where tenant_id = $1', [tenant]);
      const next = settingsDecider.evolve(rows[0]?.settings ?? settingsDecider.initialState(), event as unknown as SettingsEvent);
      await tx.query(
        `insert into realm_settings (tenant_id, settings, updated_at) values ($1, $2, $3)
         on conflict (tenant_id) do update set settings = excluded.settings, updated_at = excluded.updated_at`,
        [tenant, next, event.metadata.occurredAt],
      );
    },
  },
});
