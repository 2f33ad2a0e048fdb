import type { Queryable } from '../../platform/db/pool.ts';
import type { SecuritySettings } from './defaults.ts';
import { DEFAULT_NESTED_SETTINGS, flatten, SECTION_NAMES, type NestedSettings } from './sections.ts';

/** The security settings in force for a tenant. */
export interface SettingsProvider {
  forTenant(tenant: string): Promise<SecuritySettings>;
  nested(tenant: string): Promise<{ settings: NestedSettings; updatedAt: string | null }>;
}

/** Stored sections over the defaults, so a section added later still has its values. */
function withDefaults(stored: Partial<NestedSettings> | undefined): NestedSettings {
  return Object.fromEntries(
    SECTION_NAMES.map((section) => [section, { ...DEFAULT_NESTED_SETTINGS[section], ...(stored?.[section] ?? {}) }]),
  ) as NestedSettings;
}

export function settingsQueries(db: Queryable) {
  return {
    async nested(tenant: string): Promise<{ settings: NestedSettings; updatedAt: string | null }> {
      const { rows } = await db.query<{ settings: Partial<NestedSettings>; updated_at: Date }>(
        'select settings, updated_at from realm_settings where tenant_id = $1',
        [tenant],
      );
      return { settings: withDefaults(rows[0]?.settings), updatedAt: rows[0]?.updated_at.toISOString() ?? null };
    },
    async forTenant(tenant: string): Promise<SecuritySettings> {
      return flatten((await this.nested(tenant)).settings);
    },
  };
}

export type SettingsQueries = ReturnType<typeof settingsQueries>;
