import { readModelCache, type AppliedEventsSource } from '../../platform/projections/read-model-cache.ts';
import type { SecuritySettings } from './defaults.ts';
import type { SettingsProvider, SettingsQueries } from './provider.ts';
import { flatten, type NestedSettings } from './sections.ts';

const MAX_TENANTS = 10_000;

/**
 * Each tenant's settings from memory (logins, refreshes and token claims read them on every call),
 * dropped in every instance when the settings projection applies a change of the tenant.
 */
export function cachedSettings(source: AppliedEventsSource, queries: Pick<SettingsQueries, 'nested'>) {
  const byTenant = readModelCache<{ settings: NestedSettings; updatedAt: string | null }>(source, {
    maxEntries: MAX_TENANTS,
    load: (tenant) => queries.nested(tenant),
    // A tenant's creation names it in its data; a change, in its metadata.
    stale: { settings: (event) => (event.type === 'SecuritySettingsUpdated' ? [event.metadata.tenantId] : 'all') },
  });
  return {
    nested: (tenant: string) => byTenant.get(tenant),
    forTenant: async (tenant: string): Promise<SecuritySettings> => flatten((await byTenant.get(tenant)).settings),
  } satisfies SettingsProvider;
}
