import { settingsDecider } from '../src/modules/settings/decider.ts';
import type { SettingsEvent } from '../src/modules/settings/events.ts';
import type { NestedSettings } from '../src/modules/settings/sections.ts';
import { defineProjection } from '../src/platform/projections/projection.ts';

/** Read model `realm_settings` (migration 0005): the nested settings of each tenant that changed them. */
export const settingsProjection = defineProjection({
  name: 'settings',
  tables: ['realm_settings'],
  handlers: {
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
