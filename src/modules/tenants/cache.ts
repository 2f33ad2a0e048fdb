import { readModelCache, type AppliedEventsSource } from '../../platform/projections/read-model-cache.ts';
import type { Tenant, TenantQueries } from './queries.ts';

/** Names looked up, known or not (an unknown name is cached too, so a flood of them costs no queries). */
const MAX_NAMES = 10_000;

/**
 * The tenant a request names (x-tenant), from memory: every request resolves one. Any change to
 * the tenants read model (a tenant created, renamed or deleted) empties the cache in every instance.
 */
export function cachedTenantLookup(source: AppliedEventsSource, queries: Pick<TenantQueries, 'findByName'>) {
  const byName = readModelCache<Tenant | null>(source, {
    maxEntries: MAX_NAMES,
    load: (name) => queries.findByName(name),
    stale: { tenants: () => 'all' },
  });
  return {
    findByName: (name: string) => byName.get(name),
    /** The same answer, without a promise once loaded: every request naming a tenant looks it up. */
    findLoadedByName: (name: string) => byName.current(name),
  };
}
